package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	temporal "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/examples"
	"github.com/cairn-io/cairn/internal/devserver"
)

// env is one measured installation: a Temporal dev server and a `cairn
// server` process, both children of this program with their state in dir,
// listening on loopback ports only.
type env struct {
	dir      string
	temporal *process
	cairn    *process
	tc       temporal.Client // reads histories
	api      *client.Client
	apiURL   string
	// temporalAddr is the dev server's frontend, host:port.
	temporalAddr string
	// agents are the `cairn agent` processes serving agent nodes.
	agents []*process
	// peaksPerPhase is false when VmHWM could not be reset, so the peaks
	// are the processes' running peaks since they started.
	peaksPerPhase bool
}

// envOptions are what a run needs from its installation.
type envOptions struct {
	cairnBin, temporalBin string
	dir                   string
	platformURL           string // PLATFORM_URL for the example platform kinds
	debugAddr             string // CAIRN_DEBUG_ADDR: the server's profiles, when set
}

// process is a child process in its own process group, killed with this
// program (Pdeathsig) if it dies first.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProcess(name, logPath string, env []string, bin string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop interrupts the process group, then kills it after grace.
func (p *process) stop(grace time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGINT)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// tail is the end of the process's log, for error messages.
func (p *process) tail(lines int) string {
	f, err := os.Open(p.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		all = append(all, sc.Text())
		if len(all) > 4*lines {
			all = all[len(all)-lines:]
		}
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startEnv starts the Temporal dev server (SQLite file in dir, headless,
// Cairn's search attributes registered as `cairn dev` does) and `cairn
// server` with its defaults, pointed at it, and waits until the API is
// ready.
func startEnv(ctx context.Context, o envOptions) (e *env, err error) {
	e = &env{dir: o.dir}
	defer func() {
		if err != nil {
			e.stop()
			e = nil
		}
	}()
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return e, err
	}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return e, err
		}
	}
	hostPort := fmt.Sprintf("127.0.0.1:%d", ports[0])
	e.temporalAddr = hostPort
	args := []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", strconv.Itoa(ports[0]), "--http-port", strconv.Itoa(ports[1]), "--metrics-port", strconv.Itoa(ports[2]),
		"--db-filename", filepath.Join(o.dir, "temporal.db"), "--log-level", "error",
		"--dynamic-config-value", "frontend.enableServerVersionCheck=false"}
	args = append(args, devserver.Args()...)
	if e.temporal, err = startProcess("temporal", filepath.Join(o.dir, "temporal.log"), os.Environ(), o.temporalBin, args...); err != nil {
		return e, err
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	dialCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		e.tc, err = temporal.DialContext(dialCtx, temporal.Options{HostPort: hostPort, Logger: quiet})
		if err == nil {
			break
		}
		if e.temporal.exited() {
			return e, fmt.Errorf("the Temporal dev server exited: %v\n%s", e.temporal.err, e.temporal.tail(20))
		}
		select {
		case <-dialCtx.Done():
			return e, fmt.Errorf("the Temporal dev server at %s did not answer: %w", hostPort, err)
		case <-time.After(200 * time.Millisecond):
		}
	}

	// The example platform kinds, as `CAIRN_KINDS_DIR=examples/platform/kinds`.
	kindsDir := filepath.Join(o.dir, "kinds")
	if err := os.MkdirAll(kindsDir, 0o700); err != nil {
		return e, err
	}
	kindsYAML, err := examples.Files.ReadFile("platform/kinds/platform.yaml")
	if err != nil {
		return e, err
	}
	if err := os.WriteFile(filepath.Join(kindsDir, "platform.yaml"), kindsYAML, 0o600); err != nil {
		return e, err
	}
	apiPort, err := freePort()
	if err != nil {
		return e, err
	}
	apiAddr := fmt.Sprintf("127.0.0.1:%d", apiPort)
	// Everything else stays at the server's defaults: parallelism, batch
	// sizes, pollers, SQLite in the data dir.
	vars := map[string]string{
		"CAIRN_TEMPORAL_ADDRESS": hostPort,
		"CAIRN_DATA_DIR":         filepath.Join(o.dir, "cairn"),
		"CAIRN_API_ADDR":         apiAddr,
		"CAIRN_KINDS_DIR":        kindsDir,
		"CAIRN_LOG_LEVEL":        "warn",
		"CAIRN_LOG_FORMAT":       "json",
		"PLATFORM_URL":           o.platformURL,
	}
	if o.debugAddr != "" {
		vars["CAIRN_DEBUG_ADDR"] = o.debugAddr
	}
	if e.cairn, err = startProcess("cairn server", filepath.Join(o.dir, "cairn.log"), serverEnv(vars), o.cairnBin, "server"); err != nil {
		return e, err
	}
	e.apiURL = "http://" + apiAddr
	if e.api, err = client.New(e.apiURL, "", client.WithUserAgent("cairn-bench")); err != nil {
		return e, err
	}
	readyCtx, cancelReady := context.WithTimeout(ctx, time.Minute)
	defer cancelReady()
	for {
		err = e.api.Ready(readyCtx)
		if err == nil {
			break
		}
		if e.cairn.exited() {
			return e, fmt.Errorf("cairn server exited: %v\n%s", e.cairn.err, e.cairn.tail(20))
		}
		select {
		case <-readyCtx.Done():
			return e, fmt.Errorf("cairn server at %s not ready: %w\n%s", e.apiURL, err, e.cairn.tail(20))
		case <-time.After(100 * time.Millisecond):
		}
	}
	e.peaksPerPhase = e.resetPeaks() == nil
	return e, nil
}

// serverEnv is this program's environment without any CAIRN_ setting or
// Go collector setting (so a developer's own overrides do not leak into
// the measurement), plus vars.
func serverEnv(vars map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CAIRN_") || k == "PLATFORM_URL" || k == "GOMEMLIMIT" || k == "GOGC" {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

func (e *env) stop() {
	if e == nil {
		return
	}
	if e.tc != nil {
		e.tc.Close()
	}
	e.stopAgents()
	e.cairn.stop(15 * time.Second)
	e.temporal.stop(15 * time.Second)
}

// resetPeaks resets the processes' peak RSS (VmHWM), so the next read is
// the peak of what ran in between.
func (e *env) resetPeaks() error {
	var errs []error
	for _, p := range append([]*process{e.cairn, e.temporal}, e.agents...) {
		if p != nil {
			errs = append(errs, os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.pid()), []byte("5"), 0))
		}
	}
	return errors.Join(errs...)
}

// peaks reads the processes' VmHWM in KiB: cairn server's, Temporal's and
// the agents' together.
func (e *env) peaks() (cairnKiB, temporalKiB, agentsKiB int64) {
	for _, p := range e.agents {
		agentsKiB += vmHWM(p.pid())
	}
	return vmHWM(e.cairn.pid()), vmHWM(e.temporal.pid()), agentsKiB
}

func vmHWM(pid int) int64 { return procStatusKiB(pid, "VmHWM:") }

// procStatusKiB reads a field of /proc/PID/status given in kB (VmHWM:,
// VmRSS:); 0 when it cannot be read.
func procStatusKiB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseStatusKiB(f, field)
}

func parseStatusKiB(r io.Reader, field string) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
