package stepdata

import (
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// Before is what a step keeps before changing anything (kind
// contract.DataBefore). The first record written for an execution and step
// is kept: a retry after a crash reads it back instead of the
// already-changed state.
//
// A before-state larger than the limit (see EncodeBefore) is not kept:
// Before then holds only whether the object existed and its id, and Unkept
// the size of what was left out, so a rollback says it cannot restore the
// previous state instead of restoring something else.
type Before struct {
	Action       model.Action    `json:"action"`
	Irreversible bool            `json:"irreversible,omitempty"`
	Before       providers.State `json:"before"`
	Unkept       int             `json:"unkept,omitempty"`
}

// Outputs is what a step left once it converged (kind
// contract.DataOutputs): the object's id for the stack record, its outputs
// for dependents' expressions, and its result so a retried activity does
// not redo it.
type Outputs struct {
	ID      string         `json:"id,omitempty"`
	Outputs map[string]any `json:"outputs,omitempty"`
	Action  model.Action   `json:"action"`
	Outcome model.Outcome  `json:"outcome"`
	Deleted bool           `json:"deleted,omitempty"`
	// Refreshed marks a step that reacted to a refresh.
	Refreshed bool `json:"refreshed,omitempty"`
}

// DepOutputs is what expressions see of a dependency: its outputs with its
// id.
func (o *Outputs) DepOutputs() map[string]any {
	out := make(map[string]any, len(o.Outputs)+1)
	for k, v := range o.Outputs {
		out[k] = v
	}
	if _, ok := out["id"]; !ok && o.ID != "" {
		out["id"] = o.ID
	}
	return out
}

// Compensated is what an undone step leaves (kind
// contract.DataCompensated), so a retried compensation does not undo twice
// (an exec's undo command is not idempotent): the new id of an object its
// compensation created again (an http object comes back under a new id),
// which the stack record must name.
type Compensated struct {
	Recreated string `json:"recreated,omitempty"`
}

// OutcomeOf is the outcome of a change made by action.
func OutcomeOf(action model.Action) model.Outcome {
	switch action {
	case model.ActionCreate:
		return model.OutcomeCreated
	case model.ActionDelete:
		return model.OutcomeDeleted
	case model.ActionNoop, "":
		return model.OutcomeUnchanged
	}
	return model.OutcomeUpdated
}

// Started is what a step keeps just before it runs a command that is not
// safe to repeat (kind contract.DataStarted): with no outputs record
// beside it, the command may or may not have run. By names the activity
// that started it (its workflow run and activity id): a later attempt of
// the same activity that finds it did not see the outcome and must not
// run the command again; an operator's retry is another activity and
// does. Ended marks a command that ended with a known outcome not kept
// as outputs (it failed), which a retry runs again.
type Started struct {
	By    string `json:"by"`
	Ended bool   `json:"ended,omitempty"`
}
