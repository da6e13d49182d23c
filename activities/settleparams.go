package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// SettleParams settles the parameters of a plan that waited for approval
// (see contract.SettleParamsInput). Approved, it keeps the record's
// secrets for the stack when asked (one read, one write); otherwise it
// deletes the record and empties each execution's copy (one write each).
// Both are idempotent, so a retry is harmless.
func (a *Activities) SettleParams(ctx context.Context, in contract.SettleParamsInput) error {
	if in.Params == "" {
		return nil
	}
	// The executions whose copies it empties are the plan's own and its
	// checks' (Temporal names the plan), whatever the input says.
	plan := activity.GetInfo(ctx).WorkflowExecution.ID
	for _, id := range in.Executions {
		if id != plan && !strings.HasPrefix(id, plan+".check-") {
			return configError(fmt.Sprintf("execution %s is neither plan %s nor one of its checks", id, plan))
		}
	}
	if in.Approved {
		if !in.Keep {
			return nil
		}
		data, err := a.d.Store.GetStepData(ctx, contract.ParamsExecution(in.Params), contract.ParamsKey, contract.DataParams)
		if notFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read parameters: %w", err)
		}
		var p model.ApplyParams
		if err := json.Unmarshal(data, &p); err != nil {
			// The record holds secrets: say nothing of its bytes.
			return configError("the parameters of this plan do not decode")
		}
		kept, err := json.Marshal(model.ApplyParams{Secrets: p.Secrets})
		if err != nil {
			return fmt.Errorf("encode the stack's secrets: %w", err)
		}
		if err := a.d.Store.PutStepData(ctx, contract.StackSecretsExecution(in.StackID), contract.ParamsKey, contract.DataParams, kept); err != nil {
			return fmt.Errorf("keep the stack's secrets: %w", err)
		}
		return nil
	}
	if err := a.d.Store.DeleteStepData(ctx, contract.ParamsExecution(in.Params)); err != nil {
		return fmt.Errorf("delete parameters: %w", err)
	}
	empty := []byte("{}")
	for _, id := range in.Executions {
		if _, err := a.d.Store.GetStepData(ctx, id, contract.ParamsKey, contract.DataParams); notFound(err) {
			continue
		}
		if err := a.d.Store.PutStepData(ctx, id, contract.ParamsKey, contract.DataParams, empty); err != nil {
			return fmt.Errorf("empty the parameters of %s: %w", id, err)
		}
	}
	return nil
}
