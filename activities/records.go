package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// beforeRecord is what a step persisted before changing anything (kind
// contract.DataBefore). The first record written for an execution and step is kept:
// a retry after a crash reads it back instead of the already-changed state.
//
// A before-state larger than the limit (Deps.BeforeStateLimit) is not
// kept: Before then holds only whether the object existed and its id, and
// Unkept the size of what was left out, so a rollback says it cannot
// restore the previous state instead of restoring something else.
type beforeRecord struct {
	Action       model.Action    `json:"action"`
	Irreversible bool            `json:"irreversible,omitempty"`
	Before       providers.State `json:"before"`
	Unkept       int             `json:"unkept,omitempty"`
}

// outputsRecord is what a step left once it converged (kind contract.DataOutputs):
// the object's id for the stack record, its outputs for dependents'
// expressions, and its result so a retried activity does not redo it.
type outputsRecord struct {
	ID      string         `json:"id,omitempty"`
	Outputs map[string]any `json:"outputs,omitempty"`
	Action  model.Action   `json:"action"`
	Outcome model.Outcome  `json:"outcome"`
	Deleted bool           `json:"deleted,omitempty"`
	// Refreshed marks a step that reacted to a refresh.
	Refreshed bool `json:"refreshed,omitempty"`
}

// depOutputs is what expressions see of a dependency: its outputs with its
// id.
func (o *outputsRecord) depOutputs() map[string]any {
	out := make(map[string]any, len(o.Outputs)+1)
	for k, v := range o.Outputs {
		out[k] = v
	}
	if _, ok := out["id"]; !ok && o.ID != "" {
		out["id"] = o.ID
	}
	return out
}

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

// intentKey is the key of one step's change in one execution, the same on
// every attempt (providers.Env.Intent): a digest, so neither id is handed
// to the systems a provider talks to.
func intentKey(execID, stepID string) string {
	sum := sha256.Sum256([]byte("cairn intent\x00" + execID + "\x00" + stepID))
	return hex.EncodeToString(sum[:16])
}
