package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/stepdata"
)

// Compensate undoes a unit's changes from the before-states the steps
// recorded: created objects are deleted, updated ones restored, deleted
// ones recreated, an exec's undo is run. A step without a before-state
// changed nothing and is left alone.
func (a *Activities) Compensate(ctx context.Context, in contract.CompensateInput) (*contract.CompensateOutput, error) {
	if err := a.checkPlacement(in.Cluster, in.Unit, nil); err != nil {
		return nil, err
	}
	// No command outlives the attempt's ownership (see liveness.Fence).
	ctx = providers.WithKillBy(ctx, liveness.OwnedUntil(ctx))
	steps, err := a.unitSteps(ctx, in.ExecutionID, in.Unit)
	if err != nil {
		return nil, err
	}
	if err := a.checkPlacement(in.Cluster, in.Unit, steps); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range in.StepIDs {
		want[id] = true
	}
	res := &contract.CompensateOutput{}
	// Undo in reverse order within a unit too.
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if in.StepIDs != nil && !want[s.ID] {
			continue
		}
		if liveness.Stopping(ctx) {
			// Undone steps are marked: the next worker goes on after them.
			return nil, errHandBack
		}
		r, recreated, err := a.compensateStep(ctx, in.ExecutionID, s)
		if err != nil {
			return nil, err
		}
		if liveness.Stopping(ctx) && ctx.Err() != nil {
			return nil, errHandBack // cut off by the stop, not failed
		}
		res.Steps = append(res.Steps, r)
		if recreated != "" {
			if res.Recreated == nil {
				res.Recreated = map[string]string{}
			}
			res.Recreated[s.ID] = recreated
		}
	}
	return res, nil
}

// compensateStep undoes one step; recreated is the new id of an object
// the undo created again under another id.
func (a *Activities) compensateStep(ctx context.Context, execID string, s *planner.StoredStep) (out contract.CompensationResult, recreated string, err error) {
	out = contract.CompensationResult{StepID: s.ID}
	if done, err := a.d.Steps.GetStepData(ctx, execID, s.ID, contract.DataCompensated); err == nil {
		var rec stepdata.Compensated
		_ = json.Unmarshal(done, &rec) // an older marker is "{}"
		out.Undone = true
		return out, rec.Recreated, nil
	} else if !notFound(err) {
		return out, "", err
	}
	var before stepdata.Before
	if err := a.loadJSON(ctx, execID, s.ID, contract.DataBefore, &before); notFound(err) {
		return out, "", nil
	} else if err != nil {
		return out, "", err
	}
	var after stepdata.Outputs
	completed := true
	if err := a.loadJSON(ctx, execID, s.ID, contract.DataOutputs, &after); notFound(err) {
		completed = false
	} else if err != nil {
		return out, "", err
	}
	if before.Action == model.ActionRun && !completed {
		// A command that failed (or was cut off) did not complete: its
		// undo is for a completed run, so nothing is undone.
		return out, "", nil
	}
	if before.Irreversible {
		out.Irreversible = true
		return out, "", nil
	}
	if before.Unkept > 0 && before.Before.Exists {
		// Restoring an object that existed needs its previous state,
		// which was too large to keep: say so instead of guessing.
		out.Error = stepdata.UnkeptError(before)
		return out, "", nil
	}
	r := &stepRun{step: s}
	spec, _, err := a.resolve(ctx, execID, nil, r, false)
	if err != nil {
		// Undo needs what identifies the object, not every value.
		// Parameters that do not load leave their refs unresolved.
		params, _ := (&paramsLoader{}).load(ctx, a, execID)
		spec = a.resolveForDelete(s.Spec, exprContext(a, s, params))
	}
	ch := providers.Change{
		Action: before.Action, Outcome: stepdata.OutcomeOf(before.Action), Before: before.Before,
		After: providers.State{ID: after.ID, Exists: before.Action != model.ActionDelete, Outputs: after.Outputs},
	}
	req := providers.Request{Kind: s.Base, Name: s.Name, Spec: spec, Node: a.node(s), ObjectID: cmp.Or(after.ID, s.ObjectID)}
	left, err := a.d.Registry.CompensateState(ctx, req, ch)
	if err != nil {
		if errors.Is(err, providers.ErrIrreversible) {
			out.Irreversible = true
			return out, "", nil
		}
		// The result names its step: the provider's "compensate kind/name: "
		// would say it twice.
		title := "compensate " + strings.ToLower(req.Kind) + "/" + req.Name + ": "
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, title); ok {
			msg = "compensate: " + rest
		}
		out.Error = r.redact(msg)
		return out, "", nil
	}
	if before.Before.Exists && left.Exists && left.ID != "" && left.ID != before.Before.ID {
		recreated = left.ID
	}
	marker, err := json.Marshal(stepdata.Compensated{Recreated: recreated})
	if err != nil {
		return out, "", err
	}
	if err := a.d.Steps.PutStepData(ctx, execID, s.ID, contract.DataCompensated, marker); err != nil {
		return out, "", err
	}
	out.Undone = true
	a.log.Info("step compensated", "execution", execID, "step", s.ID, "action", before.Action, "recreated", recreated)
	return out, recreated, nil
}

// unitSteps loads the steps of a unit.
func (a *Activities) unitSteps(ctx context.Context, execID string, u contract.Unit) ([]*planner.StoredStep, error) {
	if u.Batch {
		var steps []*planner.StoredStep
		if err := a.loadJSON(ctx, execID, contract.UnitKey(u.Index), contract.DataUnit, &steps); err != nil {
			return nil, fmt.Errorf("load unit %d: %w", u.Index, err)
		}
		return steps, nil
	}
	var s planner.StoredStep
	if err := a.loadJSON(ctx, execID, u.Step, contract.DataStep, &s); err != nil {
		return nil, fmt.Errorf("load step %s: %w", u.Step, err)
	}
	return []*planner.StoredStep{&s}, nil
}
