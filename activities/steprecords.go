package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/stepdata"
)

// recall loads what earlier attempts left for the steps.
func (a *Activities) recall(ctx context.Context, execID string, runs []*stepRun) error {
	for _, r := range runs {
		var out stepdata.Outputs
		err := a.loadJSON(ctx, execID, r.step.ID, contract.DataOutputs, &out)
		switch {
		case err == nil:
			r.res.Action, r.res.Outcome, r.res.ObjectID, r.res.Refreshed = out.Action, out.Outcome, out.ID, out.Refreshed
			r.plan.After.ID, r.plan.After.Outputs = out.ID, out.Outputs
			r.done, r.recalled = true, true
			continue
		case !notFound(err):
			return err
		}
		if err := a.recallStarted(ctx, execID, r); err != nil {
			return err
		}
		var before stepdata.Before
		err = a.loadJSON(ctx, execID, r.step.ID, contract.DataBefore, &before)
		switch {
		case err == nil:
			r.prior = &before
			if before.Unkept > 0 {
				r.res.Note = stepdata.NoRollbackNote(before.Unkept, a.d.BeforeStateLimit)
			}
		case !notFound(err):
			return err
		}
	}
	return nil
}

// keepBefores writes the before-states of the runs about to change
// something, in one store write.
func (a *Activities) keepBefores(ctx context.Context, execID string, runs []*stepRun) error {
	befores := map[string][]byte{}
	for _, r := range runs {
		if r.done || r.prior != nil || r.beforeKept {
			continue
		}
		raw, unkept, err := stepdata.EncodeBefore(r.plan, a.d.BeforeStateLimit)
		if err != nil {
			return err
		}
		if unkept > 0 {
			r.res.Note = stepdata.NoRollbackNote(unkept, a.d.BeforeStateLimit)
			a.log.Warn("before-state over the limit not kept", "step", r.step.ID, "bytes", unkept, "limit", a.d.BeforeStateLimit)
		}
		befores[r.step.ID] = raw
		r.beforeKept = true
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataBefore, befores)
}

// recordOutputs keeps what runs left for the stack record, dependents'
// expressions and retried attempts, each run once.
func (a *Activities) recordOutputs(ctx context.Context, execID string, runs []*stepRun) error {
	outputs := map[string][]byte{}
	for _, r := range runs {
		if r.recalled || r.recorded || r.unknown || r.res.Outcome == model.OutcomeFailed || r.res.Outcome == model.OutcomeSkipped || r.req.Noop {
			continue
		}
		raw, err := json.Marshal(r.outputs())
		if err != nil {
			return err
		}
		outputs[r.step.ID] = raw
		r.recorded = true
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataOutputs, outputs)
}

// recordPlan keeps a dry-run's plan steps and the outputs of what exists
// (for dependents' expressions in the same dry-run).
func (a *Activities) recordPlan(ctx context.Context, execID string, runs []*stepRun) error {
	plans := map[string][]byte{}
	outputs := map[string][]byte{}
	for _, r := range runs {
		s := r.step
		ps := model.PlanStep{
			ID: s.ID, Kind: s.RecordKind, Name: s.Name, Node: s.Node, Action: r.res.Action,
			Changes: stepdata.Show(r.plan.Changes, r.secrets, stepdata.PlanValue), Error: r.res.Error, Note: stepdata.PlanNote(r.plan, a.d.BeforeStateLimit),
			Refresh: r.res.Refreshed,
		}
		if ps.Action == "" {
			ps.Action = model.ActionNoop
		}
		raw, err := json.Marshal(ps)
		if err != nil {
			return err
		}
		plans[s.ID] = raw
		if s.Exported && r.plan.After.Exists {
			rec := stepdata.Outputs{ID: r.plan.After.ID, Outputs: r.redactedOutputs(), Action: r.res.Action, Outcome: model.OutcomeUnchanged}
			if raw, err = json.Marshal(rec); err != nil {
				return err
			}
			outputs[s.ID] = raw
		}
	}
	if err := a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataPlan, plans); err != nil {
		return err
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataOutputs, outputs)
}

// intentKey is the key of one step's change in one execution, the same on
// every attempt (providers.Env.Intent): a digest, so neither id is handed
// to the systems a provider talks to.
func intentKey(execID, stepID string) string {
	sum := sha256.Sum256([]byte("cairn intent\x00" + execID + "\x00" + stepID))
	return hex.EncodeToString(sum[:16])
}
