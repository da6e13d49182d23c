package prepare

import (
	"context"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// ranBefore decides, for an execution that names events, whether a task
// stands as it ran on a node: it ran there successfully with the same
// parameters and neither its reexecute_on nor its refresh_on names one of
// the events. It returns that run's execution, or "" when the task runs.
// Cost: one history read per (node, task), cached in hist.
func ranBefore(ctx context.Context, hist *nodeHistory, rec *TaskRecord, t *model.Task, events []string) (string, error) {
	life, err := graphs.TaskLifecycle(t)
	if err != nil {
		return "", invalidGraph("task %q: %v", t.ID, err)
	}
	if life.RerunsOn(events) {
		return "", nil
	}
	run, err := hist.last(ctx, rec.Node, rec.Task)
	if err != nil || run == nil || run.Digest != rec.Digest {
		return "", err
	}
	return run.ExecutionID, nil
}
