package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// puppetVersion is `puppet --version`, or "" when puppet is not on PATH.
func puppetVersion() (path, version string) {
	p, err := exec.LookPath("puppet")
	if err != nil {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return "", ""
	}
	return p, strings.TrimSpace(string(out))
}

// comparePuppet applies the same files with `puppet apply` (create), again
// (noop) and with --noop (the dry-run), and records the times next to
// Cairn's rows. Above 1,000 files each run is stopped after the budget
// (reported as "> budget"), and skipped when the 1,000 figure of the same
// shape extrapolates beyond three budgets.
func (r *runner) comparePuppet(ctx context.Context, shape string, n int, rows []row) {
	note := func(s string) {
		for i := range rows {
			rows[i].PuppetNote = s
		}
	}
	limit := r.opts.puppetTimeout
	if n > 1000 {
		limit = r.opts.puppetBudget
		if t1k, ok := r.puppet1k[shape]; ok {
			if est := time.Duration(float64(t1k) * float64(n) / 1000); est > 3*limit {
				note(fmt.Sprintf("not run (est. %s)", est.Round(time.Second)))
				return
			}
		}
	}
	name := fmt.Sprintf("%s-%d", shape, n)
	base := filepath.Join(r.tmp, name, "puppet")
	dir := filepath.Join(base, "files")
	fs, err := genFiles(shape, dir, n)
	if err != nil {
		note("error: " + err.Error())
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		note("error: " + err.Error())
		return
	}
	manifest := filepath.Join(base, "bench.pp")
	if err := os.WriteFile(manifest, []byte(fs.puppetManifest()), 0o600); err != nil {
		note("error: " + err.Error())
		return
	}
	want := fs.expected()
	byPhase := map[string]int{}
	for i, rw := range rows {
		byPhase[rw.Phase] = i
	}
	for _, ph := range []struct {
		name     string
		args     []string
		wantCode int // --detailed-exitcodes: 2 changes, 0 none
	}{
		{"create", nil, 2},
		{"noop", nil, 0},
		{"dry-run", []string{"--noop"}, 0},
	} {
		i, ok := byPhase[ph.name]
		if !ok {
			continue
		}
		r.logf("%s N=%d: puppet apply %s(%s)", shape, n, strings.Join(append(ph.args, ""), " "), ph.name)
		d, err := puppetApply(ctx, base, manifest, ph.args, ph.wantCode, limit)
		if errors.Is(err, errStopped) && n > 1000 {
			rows[i].Puppet, rows[i].PuppetOver = limit, true
			r.logf("  puppet %s: stopped after %s", ph.name, limit)
			return
		}
		if err == nil {
			if _, err = checkFiles(dir, want); err != nil {
				err = fmt.Errorf("after puppet apply: %w", err)
			}
		}
		if err != nil {
			rows[i].PuppetNote = "error: " + err.Error()
			r.logf("  puppet %s: %v", ph.name, err)
			return
		}
		rows[i].Puppet = d
		if ph.name == "create" && n == 1000 {
			r.puppet1k[shape] = d
		}
		r.logf("  puppet %s in %s", ph.name, d.Round(time.Millisecond))
	}
}

var errStopped = errors.New("stopped")

// puppetApply times one `puppet apply` with its state under base.
func puppetApply(ctx context.Context, base, manifest string, extra []string, wantCode int, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{"apply", "--detailed-exitcodes"}
	for _, d := range []string{"vardir", "confdir", "codedir", "logdir", "rundir"} {
		args = append(args, "--"+d, filepath.Join(base, d))
	}
	args = append(args, extra...)
	args = append(args, manifest)
	logFile, err := os.OpenFile(filepath.Join(base, "puppet.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, "puppet", args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if ctx.Err() != nil {
		return d, fmt.Errorf("%w after %s", errStopped, timeout)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return d, err
	}
	if code != wantCode {
		return d, fmt.Errorf("exit code %d, want %d (log: %s)", code, wantCode, filepath.Join(base, "puppet.log"))
	}
	return d, nil
}
