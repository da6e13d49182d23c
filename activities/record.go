package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// WriteStackRecord records what an apply or destroy left, in package order:
// each resource that converged with its object id; a resource that failed
// or never ran keeps its previous entry, if it had one; a removed resource
// stays recorded until its delete succeeded. After a rollback a step whose
// change was undone keeps its previous entry, under the new id when the
// undo recreated its object, and the stack keeps its previous snapshot and
// cluster. The cluster recorded is the run's; a destroy that left nothing
// clears it with the snapshot. It
// is idempotent per execution: the store ignores a second write for the
// same execution.
func (a *Activities) WriteStackRecord(ctx context.Context, in contract.WriteStackRecordInput) (*contract.StackRecordResult, error) {
	stack, err := a.d.Store.GetStack(ctx, in.StackID)
	if notFound(err) {
		return nil, configError(fmt.Sprintf("stack %q not found", in.StackID))
	}
	if err != nil {
		return nil, err
	}
	steps, err := prepare.StepIndex(ctx, a.d.Store, in.ExecutionID)
	if err != nil {
		return nil, err
	}
	raw, err := a.d.Store.ListStepData(ctx, in.ExecutionID, contract.DataOutputs)
	if err != nil {
		return nil, err
	}
	// Only the id and whether it was deleted matter here.
	type converged struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}
	outs := make(map[string]converged, len(raw))
	for id, b := range raw {
		var o converged
		if err := json.Unmarshal(b, &o); err != nil {
			return nil, fmt.Errorf("outputs of %s: %w", id, err)
		}
		outs[id] = o
	}
	undone, err := compensatedSteps(ctx, a.d.Store, in.ExecutionID)
	if err != nil {
		return nil, err
	}
	// previous is a resource's entry before the run, under the id its
	// compensation gave it if it was recreated.
	previous := func(r model.StackResource, step string) model.StackResource {
		if rec, ok := undone[step]; ok && rec.Recreated != "" {
			r.ID = rec.Recreated
		}
		return r
	}
	prev := map[string]model.StackResource{}
	for _, r := range stack.Resources {
		prev[planner.RecordKey(r.Kind, r.PkgName, r.Node)] = r
	}
	resources := make([]model.StackResource, 0, len(steps))
	for _, s := range steps {
		if s.Delete {
			continue
		}
		key := planner.RecordKey(s.Kind, s.Name, s.Node)
		old, had := prev[key]
		o, ok := outs[s.ID]
		if _, wasUndone := undone[s.ID]; wasUndone {
			ok = false // the change was undone: what was there before stands
		}
		switch {
		case ok:
			resources = append(resources, model.StackResource{
				Kind: s.RecordKind, ID: o.ID, PkgName: s.Name, Node: s.Node,
				Associations: associations(s.Associations, had && old.Associations != nil),
			})
		case had:
			resources = append(resources, previous(old, s.ID))
		}
	}
	for _, s := range steps {
		if !s.Delete {
			continue
		}
		_, wasUndone := undone[s.ID]
		if o, ok := outs[s.ID]; ok && o.Deleted && !wasUndone {
			continue
		}
		if old, had := prev[planner.RecordKey(s.Kind, s.Name, s.Node)]; had {
			resources = append(resources, previous(old, s.ID))
		}
	}
	hash, cluster := in.SnapshotHash, in.ClusterID
	if len(undone) > 0 && !in.Destroy {
		// Rolled back: the previous package stands where it was.
		hash, cluster = stack.SnapshotHash, stack.ClusterID
	}
	if in.Destroy {
		hash, cluster = "", ""
		if len(resources) > 0 {
			hash, cluster = stack.SnapshotHash, in.ClusterID
		}
	}
	st, err := a.d.Store.WriteStackRecord(ctx, in.StackID, in.ExecutionID, resources, hash, cluster, in.Changed)
	if err != nil {
		return nil, err
	}
	return &contract.StackRecordResult{Resources: len(st.Resources), UpdatedAt: st.UpdatedAt}, nil
}

// compensatedSteps reads which steps of an execution a rollback undid.
func compensatedSteps(ctx context.Context, st store.Store, execID string) (map[string]compensatedRecord, error) {
	raw, err := st.ListStepData(ctx, execID, dataCompensated)
	if err != nil {
		return nil, err
	}
	out := make(map[string]compensatedRecord, len(raw))
	for id, b := range raw {
		var rec compensatedRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("compensation of %s: %w", id, err)
		}
		out[id] = rec
	}
	return out, nil
}

// associations is the record of a resource's associations: nil when it
// never had any, empty when it had some before and has none now.
func associations(refs []model.Ref, hadBefore bool) []model.Association {
	if len(refs) == 0 {
		if hadBefore {
			return []model.Association{}
		}
		return nil
	}
	out := make([]model.Association, 0, len(refs))
	for _, r := range refs {
		out = append(out, model.Association{Kind: r.Kind, PkgName: r.Name})
	}
	return out
}

// StorePlan keeps a dry-run's summary next to its plan steps.
func (a *Activities) StorePlan(ctx context.Context, in contract.StorePlanInput) error {
	raw, err := json.Marshal(model.Plan{Summary: in.Summary, MissingEnvRefs: in.MissingEnvRefs, MissingSecrets: in.MissingSecrets})
	if err != nil {
		return err
	}
	return a.d.Store.PutStepData(ctx, in.ExecutionID, contract.PlanSummaryKey, contract.DataPlanSummary, raw)
}

// LoadUnits returns a shard's units.
func (a *Activities) LoadUnits(ctx context.Context, in contract.LoadUnitsInput) ([]contract.Unit, error) {
	var units []contract.Unit
	if err := a.loadJSON(ctx, in.ExecutionID, contract.ShardKey(in.Shard), contract.DataShard, &units); err != nil {
		return nil, fmt.Errorf("load shard %d: %w", in.Shard, err)
	}
	return units, nil
}
