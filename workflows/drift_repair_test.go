package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// stackRecord answers CheckPlan as the store would for a stack whose last
// execution is last.
type stackRecord struct{ last string }

func (r stackRecord) CheckPlan(_ context.Context, in contract.CheckPlanInput) (*contract.CheckPlanResult, error) {
	res := &contract.CheckPlanResult{Base: r.last}
	if in.Base != r.last {
		res.MovedBy = r.last
	}
	return res, nil
}

// TestApplyWithBase: an apply decided against a stack's last execution
// (a drift repair) changes nothing once another execution was recorded
// on the stack, and runs as usual while it was not.
func TestApplyWithBase(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		applied bool
	}{
		{"the stack is where the check left it", "exec-1", true},
		{"an apply landed since", "exec-0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, "file/a"), unit(1, "file/b", 0))
			env := newEnv(t, f)
			env.RegisterActivityWithOptions(stackRecord{last: "exec-1"}.CheckPlan, activity.RegisterOptions{Name: contract.CheckPlanName})
			in := applyInput(model.OnFailureRollback, 0)
			in.Base = tt.base
			env.ExecuteWorkflow(ApplyWorkflow, in)
			require.True(t, env.IsWorkflowCompleted())
			if tt.applied {
				require.NoError(t, env.GetWorkflowError())
				assert.Len(t, f.records, 1)
				assert.Equal(t, 2, len(f.order))
				return
			}
			var app *temporal.ApplicationError
			require.ErrorAs(t, env.GetWorkflowError(), &app)
			assert.Equal(t, contract.PlanMovedType, app.Type())
			assert.Contains(t, app.Error(), "exec-1")
			assert.Empty(t, f.order, "no step ran")
			assert.Empty(t, f.records, "the stack's record was left alone")
		})
	}
}

// driftTarget is a drift check's store: the stack's target as read when
// the check began, the check's record and its repair's.
type driftTarget struct {
	target  contract.LoadDriftTargetResult
	repairs []model.DriftRepair
}

func (d *driftTarget) LoadDriftTarget(context.Context, contract.LoadDriftTargetInput) (*contract.LoadDriftTargetResult, error) {
	return &d.target, nil
}

func (d *driftTarget) RecordDrift(context.Context, contract.RecordDriftInput) (*contract.RecordDriftResult, error) {
	return &contract.RecordDriftResult{Drifted: true, Resources: []string{"file/a"}}, nil
}

func (d *driftTarget) RecordDriftRepair(_ context.Context, in contract.RecordDriftRepairInput) error {
	d.repairs = append(d.repairs, in.Repair)
	return nil
}

// TestDriftRepairAfterAnApply: a check's repair applies the package the
// check read only while the stack still has the execution the check read
// it after; when an apply landed between the check and its repair, the
// repair is skipped and the newer package stays. Under the stack's
// approval policy the repair is skipped too, nothing applied without the
// approvals every apply of the stack needs.
func TestDriftRepairAfterAnApply(t *testing.T) {
	tests := []struct {
		name    string
		readAt  string
		held    string // the target's RepairHeld
		want    string
		applied bool
		reason  string
	}{
		{"nothing landed: repaired", "exec-1", "", model.RepairApplied, true, ""},
		{"an apply landed: skipped", "exec-0", "", model.RepairSkipped, false, "applied since the check"},
		{"the stack requires approvals: skipped", "exec-1", "the stack requires 2 approval(s) of every apply: apply it to repair the drift",
			model.RepairSkipped, false, "requires 2 approval(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, "file/a"))
			env := newEnv(t, f)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: contract.DriftScheduleID("s1") + "-2026-11-27T12:00:00Z"})
			d := &driftTarget{target: contract.LoadDriftTargetResult{SnapshotHash: "h1", Base: tt.readAt, Repair: true, RepairHeld: tt.held}}
			env.RegisterActivityWithOptions(d.LoadDriftTarget, activity.RegisterOptions{Name: contract.LoadDriftTargetName})
			env.RegisterActivityWithOptions(d.RecordDrift, activity.RegisterOptions{Name: contract.RecordDriftName})
			env.RegisterActivityWithOptions(d.RecordDriftRepair, activity.RegisterOptions{Name: contract.RecordDriftRepairName})
			env.RegisterActivityWithOptions(stackRecord{last: "exec-1"}.CheckPlan, activity.RegisterOptions{Name: contract.CheckPlanName})
			env.RegisterWorkflow(DryRunWorkflow)
			env.RegisterWorkflow(ApplyWorkflow)
			env.SetTestTimeout(time.Minute)
			env.ExecuteWorkflow(DriftCheckWorkflow, DriftInput{StackID: "s1"})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var res DriftResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.NotNil(t, res.Repair)
			assert.Equal(t, tt.want, res.Repair.Status, "%+v", res.Repair)
			require.Len(t, d.repairs, 1)
			assert.Equal(t, tt.want, d.repairs[0].Status)
			if tt.applied {
				assert.Len(t, f.records, 1, "the repair recorded the stack")
			} else {
				assert.Empty(t, f.records, "the repair changed nothing")
				assert.Contains(t, res.Repair.Reason, tt.reason)
			}
		})
	}
}
