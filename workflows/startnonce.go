package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
)

// startNonceChange versions the start nonce: runs recorded before it
// consumed none.
const startNonceChange = "start-nonce"

// consumeStart consumes the start's one-time nonce before anything else
// runs (the ConsumeStart activity: one row update), so a copy of a sealed
// input started again under this or another id ends failed, having run
// nothing. A child of one of stackID's own executions (the apply of an
// approved plan, a drift check's dry-run and repair: Temporal, not the
// input, names the parent) was started by one that did, and consumes
// none; a child of any other workflow is refused the same way, and so is
// every child of a graph execution (stackID "").
func consumeStart(ctx workflow.Context, s Settings, stackID string) error {
	if workflow.GetVersion(ctx, startNonceChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	info := workflow.GetInfo(ctx)
	if p := info.ParentWorkflowExecution; p != nil {
		if stackID != "" && (isDryRunID(stackID, p.ID) || isDriftCheckID(stackID, p.ID)) {
			return nil
		}
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("started by %q, which is not an execution of this stack, and without a nonce of its own", p.ID),
			contract.StartNotIssuedType, nil)
	}
	actx := workflow.WithActivityOptions(ctx, controlOptions(s.ControlQueue, "consume the start nonce", time.Minute))
	err := workflow.ExecuteActivity(actx, contract.ConsumeStartName, contract.ConsumeStartInput{
		Nonce: s.Nonce,
	}).Get(ctx, nil)
	if refused, ok := refusal(err, contract.StartNotIssuedType); ok {
		return refused
	}
	if err != nil {
		return fmt.Errorf("consume the start nonce: %w", err)
	}
	return nil
}

// refusal is the workflow's own failure of type typ when err is an
// activity's refusal of that type (a nonce not issued), so the workflow
// or Update fails with the refusal's type and message rather than as a
// failed activity; ok is false for any other err.
func refusal(err error, typ string) (refused error, ok bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != typ {
		return nil, false
	}
	return temporal.NewNonRetryableApplicationError(app.Error(), typ, nil), true
}

// startNotIssued says err ended a run whose start nonce was not issued:
// it ran nothing, and the stack's hooks hear nothing of it.
func startNotIssued(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == contract.StartNotIssuedType
}
