package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
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

// hookIDPrefix starts the id of an event's delivery (HookDeliveryWorkflowID).
const hookIDPrefix = "hooks-"

// HookDeliveryWorkflowID is the id of the delivery of an execution's
// event: one per execution and event type.
func HookDeliveryWorkflowID(ev model.HookEvent) string {
	return hookIDPrefix + ev.ExecutionID + "-" + ev.Type
}

// HookDeliveryInput is an event for its stack's hooks; DryRun says it is a
// dry-run's (only hooks asking for dry-runs get those).
type HookDeliveryInput struct {
	Event  model.HookEvent `json:"event"`
	DryRun bool            `json:"dryRun,omitempty"`
}

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
// with err (nil: completed); a run refused for its start nonce ran
// nothing and is not told.
func notifyEnd(ctx workflow.Context, stackID, execID string, kind model.ExecutionKind, err error) {
	if startNotIssued(err) {
		return // it ran nothing: the stack's hooks hear nothing of it
	}
	ev := model.HookEvent{Type: model.EventExecutionCompleted, StackID: stackID, ExecutionID: execID, Kind: kind, Status: string(model.ExecCompleted)}
	if err != nil {
		ev.Type, ev.Status, ev.Error = model.EventExecutionFailed, string(model.ExecFailed), err.Error()
		if temporal.IsCanceledError(err) {
			ev.Status = string(model.ExecCanceled)
		}
	}
	notify(ctx, ev, kind == model.ExecDryRun)
}

// notify hands ev to a HookDeliveryWorkflow child that the execution
// abandons: the execution waits only for the child to start (so the
// delivery outlives it), never for the deliveries, which retry durably on
// their own. A local activity asks first whether any hook wants the event
// (about a millisecond), so a stack without hooks starts no child; when
// it cannot tell, the child starts and finds out. Nothing here fails the
// execution. It runs on a disconnected context, so a cancelled execution
// still reports its end.
func notify(ctx workflow.Context, ev model.HookEvent, dryRun bool) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	ev.ID = ev.ExecutionID + "/" + ev.Type
	ev.At = workflow.Now(ctx).UTC()
	in := HookDeliveryInput{Event: ev, DryRun: dryRun}
	lctx := workflow.WithLocalActivityOptions(dctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var wants bool
	err := workflow.ExecuteLocalActivity(lctx, contract.WantsHooksName, contract.DeliverHooksInput{Event: ev, DryRun: dryRun}).Get(dctx, &wants)
	if err == nil && !wants {
		return
	}
	cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
		WorkflowID:        HookDeliveryWorkflowID(ev),
		TaskQueue:         workflow.GetInfo(ctx).TaskQueueName,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary:     "send " + ev.Type + " of " + ev.ExecutionID + " to the hooks of stack " + ev.StackID,
	})
	f := workflow.ExecuteChildWorkflow(cctx, HookDeliveryWorkflow, in)
	if err := f.GetChildWorkflowExecution().Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("hooks not notified", "stack", ev.StackID, "event", ev.Type, "error", err)
	}
}

// HookDeliveryWorkflow sends an execution's event to its stack's hooks:
// one activity reads the hooks and tries each that wants the event once
// (so a stack without hooks costs that one activity), then each hook it
// did not reach is retried on its own, up to HookAttempts. Hooks' URLs and
// secrets are read from the store, never carried here. It runs only as
// the child of an execution of the event's stack, under the id
// HookDeliveryWorkflowID, so a forged start cannot send signed events.
func HookDeliveryWorkflow(ctx workflow.Context, in HookDeliveryInput) error {
	if err := checkHookDelivery(ctx, in.Event); err != nil {
		return err
	}
	log := workflow.GetLogger(ctx)
	queue := workflow.GetInfo(ctx).TaskQueueName
	ev := in.Event
	actx := workflow.WithActivityOptions(ctx, hookOptions(queue, "send "+ev.Type+" to the stack's hooks"))
	var first contract.DeliverHooksResult
	if err := workflow.ExecuteActivity(actx, contract.DeliverHooksName, contract.DeliverHooksInput{Event: ev, DryRun: in.DryRun}).Get(ctx, &first); err != nil {
		log.Warn("hooks not notified", "stack", ev.StackID, "event", ev.Type, "error", err)
		return nil
	}
	futures := make([]workflow.Future, len(first.Failed))
	for i, id := range first.Failed {
		hctx := workflow.WithActivityOptions(ctx, hookOptions(queue, "send "+ev.Type+" to hook "+id))
		futures[i] = workflow.ExecuteActivity(hctx, contract.DeliverHookName, contract.DeliverHookInput{HookID: id, Event: ev})
	}
	for i, f := range futures {
		if err := f.Get(ctx, nil); err != nil {
			log.Warn("hook not reached", "stack", ev.StackID, "hook", first.Failed[i], "event", ev.Type, "error", err)
		}
	}
	return nil
}
