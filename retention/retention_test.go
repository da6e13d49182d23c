package retention_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/retention"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

func doneWorkflow(ctx workflow.Context) error { return nil }

func waitingWorkflow(ctx workflow.Context) error {
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	return nil
}

// start runs a workflow on the dev server and returns its execution id as
// Cairn spells it, once it is closed when wait says so.
func start(t *testing.T, c client.Client, queue string, wf any, wait bool) string {
	t.Helper()
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, wf)
	require.NoError(t, err)
	if wait {
		require.NoError(t, run.Get(ctx, nil))
	}
	return starter.ExecutionID(run.GetID(), run.GetRunID())
}

func hasData(t *testing.T, st store.Store, id string) bool {
	t.Helper()
	_, err := st.GetStepData(context.Background(), id, "s", "before")
	if err == nil {
		return true
	}
	require.ErrorIs(t, err, store.ErrNotFound)
	return false
}

// The sweeper deletes the step data of executions closed more than the
// retention ago, and of executions Temporal no longer knows once they
// have been unknown that long; it keeps a running execution's data and a
// closed one's within the retention.
func TestSweeperDeletesStepDataPastRetention(t *testing.T) {
	dev := testenv.Temporal(t)
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })

	queue := "retention-" + t.Name()
	w := sdkworker.New(dev.Client, queue, sdkworker.Options{})
	w.RegisterWorkflow(doneWorkflow)
	w.RegisterWorkflow(waitingWorkflow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	closed := start(t, dev.Client, queue, doneWorkflow, true)
	running := start(t, dev.Client, queue, waitingWorkflow, false)
	t.Cleanup(func() {
		wfID, runID := starter.ParseExecutionID(running)
		_ = dev.Client.TerminateWorkflow(context.Background(), wfID, runID, "test over")
	})
	forgotten := "stack-gone.0196d7c0-0000-7000-8000-000000000000"
	// A stack's kept secrets are not an execution's: they stay.
	stackSecrets := contract.StackSecretsExecution("s1")
	for _, id := range []string{closed, running, forgotten, stackSecrets} {
		require.NoError(t, st.PutStepData(ctx, id, "s", "before", []byte(`{"before":{"private":"b2xkIGJ5dGVz"}}`)))
	}
	require.NoError(t, st.PutStartNonce(ctx, "old-nonce", closed))

	// Within a long retention nothing goes.
	n, err := retention.New(st, dev.Client, time.Hour, nil).Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	for _, id := range []string{closed, running, forgotten} {
		assert.True(t, hasData(t, st, id), id)
	}
	require.NoError(t, st.ConsumeStartNonce(ctx, "old-nonce", closed, "run-1"), "a start nonce within the retention was dropped")

	// With a short one, the closed execution's data goes; the unknown
	// one's once it has been unknown that long; the running one's stays.
	sw := retention.New(st, dev.Client, 300*time.Millisecond, nil)
	runCtx, stop := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() { sw.Run(runCtx); close(finished) }()
	t.Cleanup(func() { stop(); <-finished })
	require.Eventually(t, func() bool { return !hasData(t, st, closed) && !hasData(t, st, forgotten) },
		20*time.Second, 50*time.Millisecond)
	assert.True(t, hasData(t, st, running), "a running execution's step data was deleted")
	assert.True(t, hasData(t, st, stackSecrets), "a stack's secrets were deleted")
	assert.ErrorIs(t, st.ConsumeStartNonce(ctx, "old-nonce", closed, "run-1"), store.ErrNonceUsed, "a start nonce past the retention was kept")
}
