package devserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/internal/devserver"
	"github.com/cairn-io/cairn/internal/testenv"
)

// chainSteps is how many steps each measured workflow runs one after the
// other.
const chainSteps = 100

// How a chain's steps are dispatched.
const (
	dispatchRemote   = "remote"   // one activity per step, eager when the server allows it
	dispatchMatching = "matching" // one activity per step, through matching (eager refused)
	dispatchLocal    = "local"    // one local activity per step
	dispatchUnit     = "unit"     // one activity running every step in order
)

// chainWorkflow runs n trivial steps in order, dispatched as mode says.
func chainWorkflow(ctx workflow.Context, n int, mode string) error {
	switch mode {
	case dispatchLocal:
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
		for range n {
			if err := workflow.ExecuteLocalActivity(ctx, step, 1).Get(ctx, nil); err != nil {
				return err
			}
		}
		return nil
	case dispatchUnit:
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		return workflow.ExecuteActivity(ctx, step, n).Get(ctx, nil)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, DisableEagerExecution: mode == dispatchMatching})
	for range n {
		if err := workflow.ExecuteActivity(ctx, step, 1).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// step stands for n steps whose own work costs nothing.
func step(_ context.Context, n int) (int, error) { return n, nil }

// BenchmarkSequentialStep measures what one step of a chain costs on a dev
// server, per way of dispatching it, with Cairn's dev-server configuration
// (eager activities, one task-queue partition) and with the dev server's
// defaults. It is the measurement behind units and behind that
// configuration (docs/performance.md): a chain can only go as fast as one
// step's round trip.
func BenchmarkSequentialStep(b *testing.B) {
	bin, err := testenv.TemporalBinary()
	require.NoError(b, err)
	for _, srv := range []struct {
		name string
		args []string
		ways []string
	}{
		{"cairn-config", devserver.Args(), []string{dispatchRemote, dispatchMatching, dispatchLocal, dispatchUnit}},
		{"defaults", nil, []string{dispatchRemote, dispatchLocal}},
	} {
		c := startServer(b, bin, srv.args)
		queue := "dispatch-" + srv.name
		// Pollers as Cairn's worker has them by default (CAIRN_WORKER_POLLERS).
		w := worker.New(c, queue, worker.Options{MaxConcurrentActivityTaskPollers: 8, MaxConcurrentWorkflowTaskPollers: 8})
		w.RegisterWorkflow(chainWorkflow)
		w.RegisterActivity(step)
		require.NoError(b, w.Start())
		for _, way := range srv.ways {
			b.Run(srv.name+"/"+way, func(b *testing.B) {
				ctx := context.Background()
				run := func() {
					r, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, chainWorkflow, chainSteps, way)
					if err == nil {
						err = r.Get(ctx, nil)
					}
					require.NoError(b, err)
				}
				run() // the first run warms the worker's cache up
				start := time.Now()
				runs := 0
				for b.Loop() {
					run()
					runs++
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(runs*chainSteps), "ms/step")
			})
		}
		w.Stop()
	}
}

// startServer starts a dev server of its own with the extra flags.
func startServer(b *testing.B, bin string, args []string) client.Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin, LogLevel: "error", ExtraArgs: args,
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = srv.Stop() })
	return srv.Client()
}
