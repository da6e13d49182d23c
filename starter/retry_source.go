package starter

import (
	"context"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cairn-io/cairn/model"
)

// retrySource reads what a retry of execution id starts again: the
// execution's kind, the input its workflow started with, and its id with
// the run resolved (origin). With only set, an execution of another kind
// is ErrNotFound; then one still running or completed is ErrFinished, as
// only a failed or cancelled execution is retried. Cost: a describe and
// the first page of the run's history.
func (s *Starter) retrySource(ctx context.Context, id string, only model.ExecutionKind) (model.ExecutionKind, *commonpb.Payloads, string, error) {
	wfID, runID := ParseExecutionID(id)
	desc, err := s.c.DescribeWorkflowExecution(ctx, wfID, runID)
	if err != nil {
		return "", nil, "", notFoundOr(err, id)
	}
	info := desc.GetWorkflowExecutionInfo()
	kind := workflowKinds[info.GetType().GetName()]
	if only != "" && kind != only {
		return "", nil, "", fmt.Errorf("%w: %s is not a %s execution", ErrNotFound, id, only)
	}
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "", nil, "", fmt.Errorf("%w: only a failed or cancelled execution can be retried", ErrFinished)
	}
	runID = info.GetExecution().GetRunId()
	it := s.c.GetWorkflowHistory(ctx, wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return "", nil, "", fmt.Errorf("%w: %s has no history", ErrNotFound, id)
	}
	first, err := it.Next()
	if err != nil {
		return "", nil, "", err
	}
	return kind, first.GetWorkflowExecutionStartedEventAttributes().GetInput(), ExecutionID(wfID, runID), nil
}
