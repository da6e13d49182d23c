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
	"github.com/cairn-io/cairn/starter"
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
// dry-run's package is not read again. (Under another id the copy is
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
