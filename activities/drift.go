package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// LoadDriftTarget reads from the store what a drift check of a stack
// compares: the package the stack last applied, by its record, and
// whether drift is repaired. The check's input only names the stack, and
// a stack that does not exist (or has no drift schedule) fails the check
// for good. Two store reads.
func (a *Activities) LoadDriftTarget(ctx context.Context, in contract.LoadDriftTargetInput) (*contract.LoadDriftTargetResult, error) {
	st, err := a.d.Store.GetStack(ctx, in.StackID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, configError(fmt.Sprintf("drift check: stack %q does not exist", in.StackID))
	}
	if err != nil {
		return nil, err
	}
	rec, err := a.d.Store.GetDrift(ctx, in.StackID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, configError(fmt.Sprintf("drift check: stack %q has no drift schedule", in.StackID))
	}
	if err != nil {
		return nil, err
	}
	return &contract.LoadDriftTargetResult{SnapshotHash: st.SnapshotHash, Repair: rec.Repair}, nil
}

// drifts reports whether a planned action means the stack is not as its
// package left it: something to create, update or delete. Commands that
// would run are not drift (they keep no state).
func drifts(a model.Action) bool {
	return a == model.ActionCreate || a == model.ActionUpdate || a == model.ActionDelete
}

// RecordDrift keeps a drift check's result as the stack's last check: the
// steps the dry-run's plan would change, with their (redacted) diffs. It
// reads the plan once from the store and writes one row; running it again
// writes the same.
func (a *Activities) RecordDrift(ctx context.Context, in contract.RecordDriftInput) (*contract.RecordDriftResult, error) {
	check := model.DriftCheck{
		ExecutionID: in.ExecutionID, PlanExecutionID: in.PlanExecutionID, CheckedAt: in.CheckedAt,
		Error: in.Error, Resources: []model.PlanStep{},
	}
	out := &contract.RecordDriftResult{}
	if in.PlanExecutionID != "" && in.Error == "" {
		plan, err := ReadPlan(ctx, a.d.Store, in.PlanExecutionID)
		if err != nil {
			return nil, err
		}
		for _, s := range plan.Steps {
			if drifts(s.Action) {
				check.Resources = append(check.Resources, s)
				out.Resources = append(out.Resources, s.ID)
			}
		}
		check.Drifted = len(check.Resources) > 0
		out.Drifted = check.Drifted
	}
	if err := a.d.Store.PutDriftCheck(ctx, in.StackID, check); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			a.log.Info("drift schedule deleted during its check", "stack", in.StackID, "execution", in.ExecutionID)
			return out, nil
		}
		return nil, err
	}
	return out, nil
}

// RecordDriftRepair adds what a check's repair did to the stack's last
// check, when that check is still the last one. One read, one write.
func (a *Activities) RecordDriftRepair(ctx context.Context, in contract.RecordDriftRepairInput) error {
	rec, err := a.d.Store.GetDrift(ctx, in.StackID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if rec.LastCheck == nil || rec.LastCheck.ExecutionID != in.ExecutionID {
		return nil
	}
	repair := in.Repair
	rec.LastCheck.Repair = &repair
	if err := a.d.Store.PutDriftCheck(ctx, in.StackID, *rec.LastCheck); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}
