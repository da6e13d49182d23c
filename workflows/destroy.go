package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/model"
)

// DestroyInput deletes everything a stack records.
type DestroyInput struct {
	Settings
	StackID string `json:"stackId"`
}

// DestroyWorkflow deletes a stack's resources in reverse dependency order,
// then records what is left (nothing, when all went well). By default it
// goes on past a failed delete, as far as dependencies allow.
func DestroyWorkflow(ctx workflow.Context, in DestroyInput) (*ApplyResult, error) {
	opts := in.execOptions(ctx, activities.ModeDestroy, model.OnFailureContinue)
	t, err := newTracker(ctx, opts.ExecutionID)
	if err != nil {
		return nil, err
	}
	plan, err := prepare(ctx, opts, activities.PrepareInput{
		ExecutionID: opts.ExecutionID, Mode: activities.ModeDestroy, StackID: in.StackID,
		ClusterID: in.ClusterID, BatchSize: in.BatchSize, ShardUnits: in.ShardUnits,
	})
	if err != nil {
		return nil, err
	}
	out, err := t.execute(ctx, opts, plan)
	if err != nil {
		return nil, err
	}
	// After a rollback the record changes only when compensations brought
	// deleted objects back under new ids.
	if !out.RolledBack || len(out.Recreated) > 0 {
		err := writeRecord(ctx, opts, activities.WriteStackRecordInput{
			ExecutionID: opts.ExecutionID, StackID: in.StackID, Destroy: true,
			Changed: !out.RolledBack && out.Report.Changed(),
		})
		if err != nil {
			return nil, err
		}
	}
	t.finish(ctx, out)
	if err := out.Err(); err != nil {
		return nil, err
	}
	return &ApplyResult{ExecutionID: opts.ExecutionID, Report: out.Report, Changed: out.Report.Changed()}, nil
}
