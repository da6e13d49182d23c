package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// row is one measured phase.
type row struct {
	Shape, Phase string
	N            int           // resources or graph tasks
	Steps        int           // steps the execution ran or planned
	Chain        int           // longest dependency chain, in steps
	Wall         time.Duration // request to the end, as the client sees it
	Workflow     time.Duration // the execution's own start to close
	Events       int           // history events, child workflows included
	Workflows    int
	Largest      int           // history events of the largest workflow
	Prepare      time.Duration // the graph's preparation (PrepareGraph), scheduled to completed
	Load         string        // the load average (1 min) at the phase's start and end
	CairnKiB     int64         // peak RSS of `cairn server` during the phase
	TemporalKiB  int64         // peak RSS of the Temporal dev server during the phase
	Agents       int           // nodes served by `cairn agent` processes
	AgentsKiB    int64         // peak RSS of the agents during the phase, together
	Via          string
	Note         string // what was verified
	Puppet       time.Duration
	PuppetOver   bool          // Puppet was stopped after the time in Puppet
	PuppetNote   string        // why there is no Puppet figure
	Floor        time.Duration // the same number of `true` forks, as parallel, and nothing else
	Ansible      time.Duration // ansible-playbook on the same steps and hosts
	AnsibleOver  bool          // ansible-playbook was stopped after the time in Ansible
	AnsibleNote  string        // why there is no Ansible figure
	Err          string
}

func (r row) stepsPerSec() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Steps) / r.Wall.Seconds()
}

func (r row) msPerSeqStep() float64 {
	if r.Chain <= 0 {
		return 0
	}
	return float64(r.Wall.Microseconds()) / 1000 / float64(r.Chain)
}

// runner holds what every run shares.
type runner struct {
	opts     *options
	tmp      string
	loopback *loopback
	logf     func(format string, args ...any)
	// puppet1k is Puppet's create time per shape at N=1,000.
	puppet1k map[string]time.Duration
}

// withEnv runs fn against a fresh installation (its own Temporal dev
// server and cairn server) and stops it after.
func (r *runner) withEnv(ctx context.Context, name string, fn func(*env) ([]row, error)) ([]row, error) {
	dir := filepath.Join(r.tmp, name, "env")
	r.logf("%s: starting the Temporal dev server and cairn server", name)
	e, err := startEnv(ctx, envOptions{cairnBin: r.opts.cairnBin, temporalBin: r.opts.temporalBin, dir: dir,
		platformURL: r.loopback.url, debugAddr: r.opts.debugAddr})
	if err != nil {
		return nil, err
	}
	defer e.stop()
	if err := warmUp(ctx, e, filepath.Join(r.tmp, name, "warm-up")); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if !e.peaksPerPhase {
		r.logf("peak RSS cannot be reset here (/proc/PID/clear_refs): the figures are the processes' running peaks")
	}
	rows, err := fn(e)
	if !e.peaksPerPhase {
		for i := range rows {
			rows[i].Note = strings.TrimPrefix(rows[i].Note+"; RSS is the running peak", "; ")
		}
	}
	if err != nil && r.opts.verbose {
		r.logf("cairn server log (end):\n%s", e.cairn.tail(20))
	}
	return rows, err
}

// warmUp applies and plans one file on a stack of its own, so the first
// measured phase finds the server as a user's long-running one is (its
// connections open, the workflow code loaded) and not its first minute.
func warmUp(ctx context.Context, e *env, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fs := &fileSet{files: []fileRes{{name: "warm", path: filepath.Join(dir, "warm"), content: "warm\n"}}}
	doc := &client.Document{Data: []byte(joinDocs(fs.yamlDocs())), Format: "yaml"}
	st, err := e.api.CreateStack(ctx, model.StackInput{Name: "bench-warm-up"})
	if err != nil {
		return err
	}
	for _, start := range []func(context.Context) (*model.Execution, error){apply(e, st.ID, doc), dryRun(e, st.ID, doc)} {
		if _, err := start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// phase measures one phase. start sends the request and returns the
// finished execution as the client sees it (or, for a dry-run answered
// with its plan, just the execution's id); the wall time ends when it
// returns. check verifies the outcome and says what it verified.
func (r *runner) phase(ctx context.Context, e *env, rw *row,
	start func(ctx context.Context) (*model.Execution, error),
	check func(*model.Execution) (string, error)) error {
	r.logf("%s N=%d: %s", rw.Shape, rw.N, rw.Phase)
	pctx, cancel := context.WithTimeoutCause(ctx, r.opts.phaseTimeout,
		fmt.Errorf("longer than -phase-timeout %s", r.opts.phaseTimeout))
	defer cancel()
	fail := func(err error) error {
		if pctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", err, context.Cause(pctx))
		}
		rw.Err = fmt.Sprintf("%s: %v", rw.Phase, err)
		return errors.New(rw.Err)
	}
	_ = e.resetPeaks()
	load0 := loadAvg1()
	t0 := time.Now()
	final, err := start(pctx)
	rw.Wall = time.Since(t0)
	rw.Load = load0 + "–" + loadAvg1()
	if err != nil {
		return fail(err)
	}
	rw.CairnKiB, rw.TemporalKiB, rw.AgentsKiB = e.peaks()
	if final, err = settled(pctx, e.api, final.ID); err != nil {
		return fail(err)
	}
	if final.StartedAt != nil && final.ClosedAt != nil {
		rw.Workflow = final.ClosedAt.Sub(*final.StartedAt)
	}
	switch {
	case final.Progress != nil && final.Progress.Total > 0:
		rw.Steps = final.Progress.Total
	case len(final.Steps) > 0:
		rw.Steps = len(final.Steps)
	case final.Plan != nil:
		rw.Steps = len(final.Plan.Steps)
	}
	hs, err := historyEvents(pctx, e.tc, final.WorkflowID, final.RunID)
	if err != nil {
		return fail(fmt.Errorf("history of %s: %w", final.ID, err))
	}
	rw.Events, rw.Workflows, rw.Largest, rw.Prepare = hs.events, hs.workflows, hs.largest, hs.prepare
	if final.Status != model.ExecCompleted {
		return fail(fmt.Errorf("execution %s %s: %s", final.ID, final.Status, final.Error))
	}
	if rw.Note, err = check(final); err != nil {
		return fail(fmt.Errorf("check: %w", err))
	}
	if rw.Prepare > 0 {
		rw.Note += fmt.Sprintf("; prepared in %s", rw.Prepare.Round(time.Millisecond))
	}
	rw.Note += "; load average " + rw.Load
	r.logf("  %s in %s (workflow %s), %d history events, cairn server peak RSS %d MiB; %s", rw.Phase, rw.Wall.Round(time.Millisecond),
		rw.Workflow.Round(time.Millisecond), rw.Events, rw.CairnKiB/1024, rw.Note)
	return nil
}

// apply starts an apply and follows it.
func apply(e *env, stackID string, doc *client.Document) func(context.Context) (*model.Execution, error) {
	return func(ctx context.Context) (*model.Execution, error) {
		ex, err := e.api.Apply(ctx, stackID, doc, client.ApplyOptions{})
		if err != nil {
			return nil, err
		}
		return follow(ctx, e, ex.ID)
	}
}

// dryRun plans, as `cairn plan` does: the server answers with the plan,
// or with the running execution when it takes longer than its wait bound.
func dryRun(e *env, stackID string, doc *client.Document) func(context.Context) (*model.Execution, error) {
	return func(ctx context.Context) (*model.Execution, error) {
		plan, ex, err := e.api.DryRun(ctx, stackID, doc, client.DryRunOptions{})
		if err != nil {
			return nil, err
		}
		if plan != nil {
			return &model.Execution{ID: plan.ExecutionID}, nil
		}
		return e.api.Wait(ctx, ex.ID, 500*time.Millisecond)
	}
}

// executeGraph starts a graph execution and follows it.
func executeGraph(e *env, clusterID string, req contract.GraphRequest) func(context.Context) (*model.Execution, error) {
	return func(ctx context.Context) (*model.Execution, error) {
		ex, err := e.api.ExecuteGraph(ctx, clusterID, req)
		if err != nil {
			return nil, err
		}
		return follow(ctx, e, ex.ID)
	}
}

// follow reads the execution's event stream to its done event, as `cairn
// apply` does, and polls when the stream breaks. An execution it stops
// following is cancelled.
func follow(ctx context.Context, e *env, id string) (*model.Execution, error) {
	var final *model.Execution
	err := e.api.Events(ctx, id, func(ev client.Event) error {
		if ev.Type == client.EventDone {
			final = ev.Execution
		}
		return nil
	})
	if err == nil && final != nil {
		return final, nil
	}
	if ctx.Err() == nil {
		final, err = e.api.Wait(ctx, id, 500*time.Millisecond)
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = e.api.Cancel(cctx, id)
		return nil, err
	}
	return final, nil
}

// settled reads the finished execution, again until its report or plan is
// there (the done event may come just before).
func settled(ctx context.Context, c *client.Client, id string) (*model.Execution, error) {
	for range 100 {
		ex, err := c.GetExecution(ctx, id)
		if err != nil {
			return nil, err
		}
		if ex.Finished() && (ex.Report != nil || ex.Plan != nil || ex.Status != model.ExecCompleted) {
			return ex, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("execution %s did not settle with a report or plan", id)
}

// checkFiles compares the regular files under dir with want (path →
// content; "*" is any content).
func checkFiles(dir string, want map[string]string) (int, error) {
	seen := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		exp, ok := want[path]
		if !ok {
			return fmt.Errorf("unexpected file %s", path)
		}
		if exp != "*" {
			got, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if string(got) != exp {
				return fmt.Errorf("%s holds %q, want %q", path, truncate(string(got), 60), truncate(exp, 60))
			}
		}
		seen++
		return nil
	})
	if err != nil {
		return seen, err
	}
	if seen != len(want) {
		return seen, fmt.Errorf("%d files on disk under %s, want %d", seen, dir, len(want))
	}
	return seen, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
