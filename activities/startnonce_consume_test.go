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
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.PutStartNonce(ctx, "nonce-1", "stack-a-dryrun-1"))
	acts := activities.New(activities.Deps{Store: st})

	// consume runs the activity in a workflow under id wfID, as a start's
	// first step does.
	consume := func(wfID, nonce string) error {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.RegisterActivityWithOptions(acts.ConsumeStart, activity.RegisterOptions{Name: contract.ConsumeStartName})
		env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
			ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
				RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
			return workflow.ExecuteActivity(ctx, contract.ConsumeStartName, contract.ConsumeStartInput{Nonce: nonce}).Get(ctx, nil)
		}, workflow.RegisterOptions{Name: "start"})
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: wfID})
		env.ExecuteWorkflow("start")
		require.True(t, env.IsWorkflowCompleted())
		return env.GetWorkflowError()
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
