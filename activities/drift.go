package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// LoadDriftTarget reads from the store what a drift check of a stack
// compares: the package the stack last applied, by its record, the
// cluster it applied it on (its nodes hold the targeted resources), the
// parameters that apply used (see driftParams), and whether drift is
// repaired. The check's input only names the stack. A stack that does not
// exist, or has no drift record, has its schedule deleted here, so an
// orphaned schedule stops at its next check: the result says Gone. A few
// store reads, one write when the apply had parameters.
func (a *Activities) LoadDriftTarget(ctx context.Context, in contract.LoadDriftTargetInput) (*contract.LoadDriftTargetResult, error) {
	st, err := a.d.Store.GetStack(ctx, in.StackID)
	if errors.Is(err, store.ErrNotFound) {
		return a.driftGone(ctx, in.StackID, "the stack does not exist")
	}
	if err != nil {
		return nil, err
	}
	rec, err := a.d.Store.GetDrift(ctx, in.StackID)
	if errors.Is(err, store.ErrNotFound) {
		return a.driftGone(ctx, in.StackID, "the stack has no drift record")
	}
	if err != nil {
		return nil, err
	}
	out := &contract.LoadDriftTargetResult{SnapshotHash: st.SnapshotHash, Base: st.LastExecutionID, ClusterID: st.ClusterID, Repair: rec.Repair}
	if rec.Repair {
		policy, err := a.d.Store.ApprovalPolicy(ctx, model.ScopeStack, in.StackID)
		switch {
		case err == nil && policy.Required > 0:
			out.RepairHeld = fmt.Sprintf("the stack requires %d approval(s) of every apply: apply it to repair the drift", policy.Required)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	if st.SnapshotHash == "" {
		return out, nil
	}
	out.Params, out.Error, err = a.driftParams(ctx, in, st.SnapshotHash)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// driftGone deletes the drift schedule of a stack that is gone.
func (a *Activities) driftGone(ctx context.Context, stackID, why string) (*contract.LoadDriftTargetResult, error) {
	if err := a.deleteDriftSchedule(ctx, stackID); err != nil {
		return nil, err
	}
	a.log.Info("drift schedule deleted: "+why, "stack", stackID, "schedule", contract.DriftScheduleID(stackID))
	return &contract.LoadDriftTargetResult{Gone: true}, nil
}

// deleteDriftSchedule deletes the stack's drift schedule in Temporal; none
// is fine, so a retry is harmless. A worker without Schedules (a node's)
// has none to delete.
func (a *Activities) deleteDriftSchedule(ctx context.Context, stackID string) error {
	if a.d.Schedules == nil {
		return nil
	}
	id := contract.DriftScheduleID(stackID)
	err := a.d.Schedules.GetHandle(ctx, id).Delete(ctx)
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("delete drift schedule %s: %w", id, err)
	}
	return nil
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
		plan, err := prepare.ReadPlan(ctx, a.d.Store, in.PlanExecutionID)
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
	if err := store.SaveDriftCheck(ctx, a.d.Store, in.StackID, check); err != nil {
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
	last, err := rec.Check()
	if err != nil {
		return err
	}
	if last == nil || last.ExecutionID != in.ExecutionID {
		return nil
	}
	repair := in.Repair
	last.Repair = &repair
	if err := store.SaveDriftCheck(ctx, a.d.Store, in.StackID, *last); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}
