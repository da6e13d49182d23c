package starter_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/workflows"
)

// recordedInput is the first payload of a run's input as Temporal holds
// it (sealed by the codec).
func recordedInput(t *testing.T, c client.Client, wfID, runID string) *commonpb.Payload {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	require.True(t, it.HasNext())
	ev, err := it.Next()
	require.NoError(t, err)
	in := ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	require.Len(t, in, 1)
	return in[0]
}

// A sealed input copied from a run that Cairn started, and started again
// on Temporal by someone holding access to it (no codec key needed: the
// payload goes as it is), finds its start nonce consumed and ends failed
// before its first step: the apply's command does not run again, the
// destroy removes nothing again, the dry-run's package is not read again. (Under another id the copy is
// refused before, by the workflows' check of their ids.)
func TestACopiedSealedStartRunsNothing(t *testing.T) {
	r := newTrustRig(t, true)
	s := r.stackWithURL()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	tests := []struct {
		name  string
		start func() (*starter.Execution, error)
		typ   string
	}{
		{
			name: "apply under its own id",
			start: func() (*starter.Execution, error) {
				return r.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, URLs: s.URLs})
			},
			typ: "ApplyWorkflow",
		},
		{
			name: "destroy under its own id, once it ended",
			start: func() (*starter.Execution, error) {
				return r.starter.StartDestroy(ctx, starter.StackRun{StackID: s.ID})
			},
			typ: "DestroyWorkflow",
		},
		{
			name: "dry-run, once it ended",
			start: func() (*starter.Execution, error) {
				return r.starter.StartDryRun(ctx, starter.StackRun{StackID: s.ID, URLs: s.URLs})
			},
			typ: "DryRunWorkflow",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := tt.start()
			require.NoError(t, err)
			require.NoError(t, r.c.GetWorkflow(ctx, ex.WorkflowID, ex.RunID).Get(ctx, nil), "Cairn's own start runs")
			_ = os.Remove(r.marker)
			fetched := r.fetched.Load()
			require.NotZero(t, fetched, "the run read its package")

			run, err := r.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: ex.WorkflowID, TaskQueue: r.queue, WorkflowExecutionTimeout: time.Minute,
			}, tt.typ, converter.NewRawValue(recordedInput(t, r.dev.Client, ex.WorkflowID, ex.RunID)))
			require.NoError(t, err)
			err = r.c.GetWorkflow(ctx, ex.WorkflowID, run.GetRunID()).Get(ctx, nil)
			require.Error(t, err, "the copy completed")
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.Equal(t, contract.StartNotIssuedType, app.Type(), "failure: %v", err)
			assert.Contains(t, err.Error(), "start not issued by this Cairn or already used")
			r.ranNothing(t, fetched)
		})
	}
}

// recordedApproval is the first approval Update a run accepted, as
// Temporal holds it (sealed by the codec).
func recordedApproval(t *testing.T, c client.Client, wfID, runID string) *commonpb.Payload {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			return a.GetAcceptedRequest().GetInput().GetArgs().GetPayloads()[0]
		}
	}
	t.Fatalf("%s accepted no approval", wfID)
	return nil
}

// An approval's Update copied from one plan's history and sent to another
// plan of the same stack, as anyone who reaches Temporal can (no codec key
// needed: the payload goes as it is), is refused, its nonce being the
// first plan's: the second keeps waiting, and its own approval, through
// the starter, still decides it, under the principal the starter named.
func TestACopiedApprovalDecidesNothing(t *testing.T) {
	r := newTrustRig(t, true)
	s := r.stackWithURL()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	plan := func() *starter.Execution {
		ex, err := r.starter.StartDryRun(ctx, starter.StackRun{StackID: s.ID, URLs: s.URLs,
			Approval: &contract.ApprovalSettings{Timeout: time.Hour}})
		require.NoError(t, err)
		return ex
	}
	answer := func(ex *starter.Execution, req model.ApprovalRequest) *model.Approval {
		var res *model.Approval
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var err error
			res, err = r.starter.Approve(ctx, ex.ID, req)
			assert.NoError(c, err)
		}, time.Minute, 100*time.Millisecond, "%s never awaited approval", ex.ID)
		return res
	}
	first, second := plan(), plan()
	got := answer(first, model.ApprovalRequest{Approve: false, By: "alice", Comment: "no"})
	require.Equal(t, model.ApprovalRejected, got.Status)
	copied := recordedApproval(t, r.dev.Client, first.WorkflowID, first.RunID)

	h, err := r.dev.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: second.WorkflowID, RunID: second.RunID, UpdateName: workflows.ApprovalUpdate,
		Args: []any{converter.NewRawValue(copied)}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	require.Error(t, err, "the copied rejection was taken")
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app, "got %v", err)
	assert.Equal(t, contract.ActNotIssuedType, app.Type())

	got = answer(second, model.ApprovalRequest{Approve: false, By: "bob", Comment: "not yet"})
	assert.Equal(t, model.ApprovalRejected, got.Status)
	assert.Equal(t, "bob", got.By, "who rejected")
}
