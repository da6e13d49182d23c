package starter

import (
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
