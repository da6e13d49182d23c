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
// nothing. A child of a Cairn workflow (an approved apply, a shard, a
// drift check's run) was started by one that did, and consumes none.
func consumeStart(ctx workflow.Context, s Settings) error {
	if workflow.GetVersion(ctx, startNonceChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	info := workflow.GetInfo(ctx)
	if info.ParentWorkflowExecution != nil {
		return nil
	}
	actx := workflow.WithActivityOptions(ctx, controlOptions(s.ControlQueue, "consume the start nonce", time.Minute))
	err := workflow.ExecuteActivity(actx, contract.ConsumeStartName, contract.ConsumeStartInput{
		Nonce: s.Nonce, Run: info.WorkflowExecution.RunID,
	}).Get(ctx, nil)
	if startNotIssued(err) {
		var app *temporal.ApplicationError
		errors.As(err, &app)
		return temporal.NewNonRetryableApplicationError(app.Error(), contract.StartNotIssuedType, nil)
	}
	if err != nil {
		return fmt.Errorf("consume the start nonce: %w", err)
	}
	return nil
}

// startNotIssued says err ended a run whose start nonce was not issued:
// it ran nothing, and the stack's hooks hear nothing of it.
func startNotIssued(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == contract.StartNotIssuedType
}
