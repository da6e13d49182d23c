package starter

import (
	"context"
	"fmt"

	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/cairn-io/cairn/workflows"
)

// ours refuses, with ErrNotFound, a workflow that is not one of the
// executions this starter runs: its type must be one of Cairn's execution
// workflows, its id of the shape Cairn gives that type, and its task queue
// the control plane's. Anything else in the namespace is not Cairn's to
// cancel or decide.
func (s *Starter) ours(info *workflowpb.WorkflowExecutionInfo, id string) error {
	typ := info.GetType().GetName()
	if _, ok := workflowKinds[typ]; !ok || !workflows.IsExecutionWorkflowID(typ, info.GetExecution().GetWorkflowId()) {
		return fmt.Errorf("%w: %s is not a Cairn execution", ErrNotFound, id)
	}
	if q := info.GetTaskQueue(); q != "" && q != s.cfg.TaskQueue {
		return fmt.Errorf("%w: %s is not a Cairn execution (task queue %q)", ErrNotFound, id, q)
	}
	return nil
}

// describeOurs describes the execution id names and refuses, as ours does,
// one that is not Cairn's. It returns the workflow and run ids the
// execution id holds (the run id empty for the latest run) and the
// execution's info. Cost: one DescribeWorkflowExecution.
func (s *Starter) describeOurs(ctx context.Context, id string) (wfID, runID string, info *workflowpb.WorkflowExecutionInfo, err error) {
	wfID, runID = ParseExecutionID(id)
	desc, err := s.c.DescribeWorkflowExecution(ctx, wfID, runID)
	if err != nil {
		return "", "", nil, notFoundOr(err, id)
	}
	info = desc.GetWorkflowExecutionInfo()
	if err := s.ours(info, id); err != nil {
		return "", "", nil, err
	}
	return wfID, runID, info, nil
}
