package activities

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/contract"
)

// RemoveStack removes a destroyed stack's record, the last step of
// DELETE /v1/stacks/{id}. A record that still lists resources (a delete
// failed or was skipped) is kept so the destroy can be sent again; a
// record already gone is fine, so a retried activity is harmless. The
// stack's drift schedule goes with it, its hooks with its secrets, and its
// drift record with its row.
func (a *Activities) RemoveStack(ctx context.Context, in contract.RemoveStackInput) (*contract.RemoveStackResult, error) {
	st, err := a.d.Store.GetStack(ctx, in.StackID)
	if notFound(err) {
		if err := a.deleteDriftSchedule(ctx, in.StackID); err != nil {
			return nil, err
		}
		return &contract.RemoveStackResult{Removed: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stack %s: %w", in.StackID, err)
	}
	if n := len(st.Resources); n > 0 {
		a.log.Warn("destroy left resources; keeping the stack record", "stack", in.StackID, "resources", n)
		return &contract.RemoveStackResult{Remaining: n}, nil
	}
	if err := a.d.Store.DeleteStack(ctx, in.StackID); err != nil && !notFound(err) {
		return nil, fmt.Errorf("delete stack %s: %w", in.StackID, err)
	}
	if err := a.d.Store.DeleteStepData(ctx, contract.StackSecretsExecution(in.StackID)); err != nil && !notFound(err) {
		return nil, fmt.Errorf("delete the secrets of stack %s: %w", in.StackID, err)
	}
	if err := a.deleteDriftSchedule(ctx, in.StackID); err != nil {
		return nil, err
	}
	a.log.Info("stack removed after destroy", "stack", in.StackID)
	return &contract.RemoveStackResult{Removed: true}, nil
}
