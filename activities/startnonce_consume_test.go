package activities_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/store"
)

// TestConsumeStartTakesTheWorkflowFromTemporal: the nonce is consumed for
// the workflow id and run Temporal names, so an input copied under another
// workflow id cannot use up the nonce of the run it was copied from, even
// before that run consumed it; the run it was issued for still starts,
// and its retry passes (a second run is the store's test). A start
// without a nonce is refused on a store no earlier release used.
func TestConsumeStartTakesTheWorkflowFromTemporal(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	require.NoError(t, st.PutStartNonce(ctx, "nonce-1", "stack-a-dryrun-1"))
	acts := activities.New(activities.Deps{Store: st})

	consume := func(wfID, nonce string) error {
		return runInWorkflow(t, wfID, contract.ConsumeStartName, acts.ConsumeStart, contract.ConsumeStartInput{Nonce: nonce})
	}
	notIssued := func(t *testing.T, err error) {
		t.Helper()
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app, "got %v", err)
		assert.Equal(t, contract.StartNotIssuedType, app.Type())
	}

	notIssued(t, consume("stack-a-dryrun-2", "nonce-1"))
	require.NoError(t, consume("stack-a-dryrun-1", "nonce-1"), "the copy used up the nonce")
	require.NoError(t, consume("stack-a-dryrun-1", "nonce-1"), "a retry of the same run")
	notIssued(t, consume("stack-a-dryrun-3", ""))
}

// runInWorkflow runs activity fn, registered as name, with in as the one
// step of a workflow under id wfID (so the activity's info names it), and
// returns the workflow's error: the activity's, not retried.
func runInWorkflow(t *testing.T, wfID, name string, fn, in any) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, name, in).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "run"})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: wfID})
	env.ExecuteWorkflow("run")
	require.True(t, env.IsWorkflowCompleted())
	return env.GetWorkflowError()
}

// openStore is a fresh SQLite store, closed when the test ends.
func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}
