package starter

import (
	"context"

	"go.temporal.io/sdk/client"
)

// update sends a workflow Update with one argument and waits for its
// result: one UpdateWorkflow call that returns once the handler finished.
// The error is the SDK's, for the caller to read (an application error of
// the handler, a workflow that already closed).
func update[T any](ctx context.Context, c client.Client, wfID, runID, name string, arg any) (*T, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: wfID, RunID: runID, UpdateName: name,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, err
	}
	var res T
	if err := h.Get(ctx, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
