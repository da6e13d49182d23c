package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
)

// vouchAct consumes the nonce the starter recorded for an operator's act
// on this execution, carried by the Update being handled (the ConsumeAct
// activity on queue: one row update), and returns the principal recorded
// with it: who acted is the store's word, not the payload's By. An Update
// copied from another execution's history, sent again under another
// Update id, or made up by someone reaching Temporal fails
// ActNotIssuedType, and nothing changes.
func vouchAct(ctx workflow.Context, queue, nonce, act string) (string, error) {
	actx := workflow.WithActivityOptions(ctx, controlOptions(queue, "check who asked to "+act, time.Minute))
	in := contract.ConsumeActInput{Nonce: nonce, Act: act}
	if u := workflow.GetCurrentUpdateInfo(ctx); u != nil {
		in.Update = u.ID
	}
	var res contract.ConsumeActResult
	err := workflow.ExecuteActivity(actx, contract.ConsumeActName, in).Get(ctx, &res)
	if refused, ok := refusal(err, contract.ActNotIssuedType); ok {
		return "", refused
	}
	if err != nil {
		return "", fmt.Errorf("check who asked to %s: %w", act, err)
	}
	return res.By, nil
}
