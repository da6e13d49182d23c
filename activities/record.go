package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/stepdata"
	"github.com/cairn-io/cairn/store"
)

// WriteStackRecord records what an apply or destroy left
// (stepdata.StackRecord) from the execution's index, outputs and
// compensation marks. It is idempotent per execution: the store ignores a
// second write for the same execution.
func (a *Activities) WriteStackRecord(ctx context.Context, in contract.WriteStackRecordInput) (*contract.StackRecordResult, error) {
	stack, err := a.d.Store.GetStack(ctx, in.StackID)
	if notFound(err) {
		return nil, configError(fmt.Sprintf("stack %q not found", in.StackID))
	}
	if err != nil {
		return nil, err
	}
	run := stepdata.StackRun{Destroy: in.Destroy, SnapshotHash: in.SnapshotHash, ClusterID: in.ClusterID, Partial: in.Partial}
	if run.Steps, err = prepare.StepIndex(ctx, a.d.Store, in.ExecutionID); err != nil {
		return nil, err
	}
	// Outputs are read a row at a time, keeping of each only what the
	// record needs (100,000 steps' outputs would otherwise be held whole,
	// raw and decoded).
	if run.Converged, err = decodeEach[stepdata.Converged](ctx, a.d.Store, in.ExecutionID, contract.DataOutputs, "outputs"); err != nil {
		return nil, err
	}
	if run.Undone, err = compensatedSteps(ctx, a.d.Store, in.ExecutionID); err != nil {
		return nil, err
	}
	resources, hash, cluster := stepdata.StackRecord(stack, run)
	st, err := a.d.Store.WriteStackRecord(ctx, in.StackID, in.ExecutionID, resources, hash, cluster, in.Changed)
	if err != nil {
		return nil, err
	}
	return &contract.StackRecordResult{Resources: len(st.Resources), UpdatedAt: st.UpdatedAt}, nil
}

// compensatedSteps reads which steps of an execution a rollback undid.
func compensatedSteps(ctx context.Context, st store.Store, execID string) (map[string]stepdata.Compensated, error) {
	return decodeEach[stepdata.Compensated](ctx, st, execID, contract.DataCompensated, "compensation")
}

// decodeEach decodes each step's data of one kind as T, one row at a
// time (store.Store.EachStepData).
func decodeEach[T any](ctx context.Context, st store.Store, execID, kind, what string) (map[string]T, error) {
	out := map[string]T{}
	err := st.EachStepData(ctx, execID, kind, func(id string, data []byte) error {
		var rec T
		if err := json.Unmarshal(data, &rec); err != nil {
			return fmt.Errorf("%s of %s: %w", what, id, err)
		}
		out[id] = rec
		return nil
	})
	return out, err
}

// StorePlan keeps a dry-run's summary next to its plan steps.
func (a *Activities) StorePlan(ctx context.Context, in contract.StorePlanInput) error {
	raw, err := json.Marshal(model.Plan{Summary: in.Summary, MissingEnvRefs: in.MissingEnvRefs, MissingSecrets: in.MissingSecrets})
	if err != nil {
		return err
	}
	return a.d.Store.PutStepData(ctx, in.ExecutionID, contract.PlanSummaryKey, contract.DataPlanSummary, raw)
}

// LoadUnits returns a shard's units, or one page of them.
func (a *Activities) LoadUnits(ctx context.Context, in contract.LoadUnitsInput) ([]contract.Unit, error) {
	key := contract.ShardKey(in.Shard)
	if in.Paged {
		key = contract.ShardPageKey(in.Shard, in.Page)
	}
	var units []contract.Unit
	if err := a.loadJSON(ctx, in.ExecutionID, key, contract.DataShard, &units); err != nil {
		return nil, fmt.Errorf("load units %s: %w", key, err)
	}
	return units, nil
}
