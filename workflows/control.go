package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
)

// Executions call the control plane's bookkeeping activities on its own
// queue: Prepare before running, WriteStackRecord after.

// prepare runs the Prepare activity on the control plane.
func prepare(ctx workflow.Context, opts ExecOptions, in contract.PrepareInput) (*contract.PreparedPlan, error) {
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue, "prepare "+string(in.Mode), 30*time.Minute))
	var plan contract.PreparedPlan
	if err := workflow.ExecuteActivity(actx, contract.PrepareName, in).Get(ctx, &plan); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &plan, nil
}

// storePlan stores out's plan as opts' execution's (the StorePlan
// activity, summary naming it in the history).
func storePlan(ctx workflow.Context, opts ExecOptions, summary string, out *Outcome) error {
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue, summary, 5*time.Minute))
	return workflow.ExecuteActivity(actx, contract.StorePlanName, contract.StorePlanInput{
		ExecutionID: opts.ExecutionID, Summary: out.Plan,
		MissingEnvRefs: nonNil(out.MissingEnv), MissingSecrets: nonNil(out.MissingSecrets),
	}).Get(ctx, nil)
}

// writeRecord records what an apply or destroy left, on a context that
// cancellation does not reach. The changes are made: giving up on their
// record would leave objects the stack does not know (the next apply
// creates them again) or name objects that are gone, so the write is
// retried until it lands (recordOptions); only an error no retry can fix
// (the stack was removed) ends it.
func writeRecord(ctx workflow.Context, opts ExecOptions, in contract.WriteStackRecordInput) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, recordOptions(opts.ControlQueue, "write stack record "+in.StackID))
	var res contract.StackRecordResult
	if err := workflow.ExecuteActivity(actx, contract.WriteStackRecordName, in).Get(dctx, &res); err != nil {
		return fmt.Errorf("write stack record: %w", err)
	}
	return nil
}
