package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// HookAttempts bounds the deliveries of one event to one hook; attempts
// back off from one second up to HookRetryInterval.
const (
	HookAttempts      = 6
	HookRetryInterval = 30 * time.Second
)

// hookOptions are one delivery's: short attempts, bounded retries.
func hookOptions(queue, summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        HookRetryInterval,
			MaximumAttempts:        HookAttempts,
			NonRetryableErrorTypes: []string{contract.ConfigErrorType},
		},
		Summary: summary,
	}
}

// notifyEnd tells the stack's hooks that execution execID of kind ended
// with err (nil: completed).
func notifyEnd(ctx workflow.Context, stackID, execID string, kind model.ExecutionKind, err error) {
	ev := model.HookEvent{Type: model.EventExecutionCompleted, StackID: stackID, ExecutionID: execID, Kind: kind, Status: string(model.ExecCompleted)}
	if err != nil {
		ev.Type, ev.Status, ev.Error = model.EventExecutionFailed, string(model.ExecFailed), err.Error()
		if temporal.IsCanceledError(err) {
			ev.Status = string(model.ExecCanceled)
		}
	}
	notify(ctx, ev, kind == model.ExecDryRun)
}

// notify POSTs ev to each hook of its stack that wants it, each delivery
// an activity retried on its own (bounded by HookAttempts), and waits for
// them. Nothing here fails the execution: a hook that cannot be reached
// is logged. It runs on a disconnected context, so a cancelled execution
// still reports its end. Without hooks it costs one activity.
func notify(ctx workflow.Context, ev model.HookEvent, dryRun bool) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	log := workflow.GetLogger(ctx)
	queue := workflow.GetInfo(ctx).TaskQueueName
	ev.ID = ev.ExecutionID + "/" + ev.Type
	ev.At = workflow.Now(ctx).UTC()
	actx := workflow.WithActivityOptions(dctx, controlOptions(queue, "find the stack's hooks for "+ev.Type, time.Minute))
	var match contract.MatchHooksResult
	err := workflow.ExecuteActivity(actx, contract.MatchHooksName, contract.MatchHooksInput{
		StackID: ev.StackID, Type: ev.Type, DryRun: dryRun,
	}).Get(dctx, &match)
	if err != nil {
		log.Warn("hooks not notified", "stack", ev.StackID, "event", ev.Type, "error", err)
		return
	}
	futures := make([]workflow.Future, len(match.HookIDs))
	for i, id := range match.HookIDs {
		hctx := workflow.WithActivityOptions(dctx, hookOptions(queue, "send "+ev.Type+" to hook "+id))
		futures[i] = workflow.ExecuteActivity(hctx, contract.DeliverHookName, contract.DeliverHookInput{
			StackID: ev.StackID, HookID: id, Event: ev,
		})
	}
	for i, f := range futures {
		if err := f.Get(dctx, nil); err != nil {
			log.Warn("hook not reached", "stack", ev.StackID, "hook", match.HookIDs[i], "event", ev.Type, "error", err)
		}
	}
}
