package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// DestroyInput deletes everything a stack records.
type DestroyInput struct {
	Settings
	StackID string `json:"stackId"`
	// RemoveStack removes the stack record once every resource is deleted
	// (DELETE /v1/stacks/{id}).
	RemoveStack bool `json:"removeStack,omitempty"`
}

// DestroyWorkflow deletes a stack's resources in reverse dependency order,
// then records what is left (nothing, when all went well). By default it
// goes on past a failed delete, as far as dependencies allow. With
// RemoveStack, a destroy that deleted everything removes the record last,
// so the stack is gone whether or not anyone waits for the execution. Like
// an apply, it runs only under its stack's lock id.
// Its end is sent to the stack's hooks.
func DestroyWorkflow(ctx workflow.Context, in DestroyInput) (*ApplyResult, error) {
	if err := checkStackRun(ctx, in.Settings, in.StackID); err != nil {
		return nil, err
	}
	res, err := destroy(ctx, in)
	notifyEnd(ctx, in.StackID, ExecutionID(ctx, in.Settings), model.ExecDestroy, err)
	return res, err
}

// destroy is DestroyWorkflow once its input is checked.
func destroy(ctx workflow.Context, in DestroyInput) (*ApplyResult, error) {
	opts := in.execOptions(ctx, contract.ModeDestroy, model.OnFailureContinue)
	t, err := newTracker(ctx, opts.ExecutionID)
	if err != nil {
		return nil, err
	}
	// After the tracker: its queries answer from the first task on.
	if err := consumeStart(ctx, in.Settings, in.StackID); err != nil {
		return nil, err
	}
	plan, err := prepare(ctx, opts, in.prepareInput(opts.ExecutionID, contract.ModeDestroy, in.StackID, "", ""))
	if err != nil {
		return nil, err
	}
	out, err := t.execute(ctx, opts, plan)
	if err != nil {
		return nil, err
	}
	// After a rollback the record changes only when compensations brought
	// deleted objects back under new ids.
	if !out.RolledBack || len(out.Recreated) > 0 {
		err := writeRecord(ctx, opts, contract.WriteStackRecordInput{
			ExecutionID: opts.ExecutionID, StackID: in.StackID, ClusterID: plan.ClusterID, Destroy: true,
			Changed: !out.RolledBack && out.Report.Changed(),
		})
		if err != nil {
			return nil, err
		}
	}
	if in.RemoveStack && !out.Failed && !out.RolledBack && !out.Cancelled {
		if err := removeStack(ctx, opts, in.StackID); err != nil {
			return nil, err
		}
	}
	t.finish(ctx, out)
	if err := out.Err(); err != nil {
		return nil, err
	}
	return &ApplyResult{ExecutionID: opts.ExecutionID, Report: out.Report, Changed: out.Report.Changed()}, nil
}

// removeStack removes the destroyed stack's record; the activity keeps a
// record that still lists resources.
func removeStack(ctx workflow.Context, opts ExecOptions, stackID string) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, controlOptions(opts.ControlQueue, "remove stack "+stackID, 5*time.Minute))
	var res contract.RemoveStackResult
	if err := workflow.ExecuteActivity(actx, contract.RemoveStackName, contract.RemoveStackInput{StackID: stackID}).Get(dctx, &res); err != nil {
		return fmt.Errorf("remove stack record: %w", err)
	}
	if !res.Removed {
		workflow.GetLogger(ctx).Warn("stack record kept: resources remain", "stack", stackID, "resources", res.Remaining)
	}
	return nil
}
