package workflows

import (
	"errors"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
)

// DriftCheckFailedType marks a drift check whose dry-run failed: it could
// not tell whether the stack drifted.
const DriftCheckFailedType = "DriftCheckFailed"

// DriftInput names the stack a drift check runs for. It is a claim,
// checked against the workflow id; the package compared and whether to
// repair are read from the store.
type DriftInput struct {
	StackID string `json:"stackId"`
	// Resources limits the check, and its repair, to these resources
	// (planner.RecordKey: "kind/name@node") and what they depend on: a
	// watcher's check of what changed. Empty: the whole stack.
	Resources []string `json:"resources,omitempty"`
}

// DriftResult is a finished drift check. The drifted resources' diffs are
// in the store (GET /v1/stacks/{id}/drift).
type DriftResult struct {
	ExecutionID     string             `json:"executionId"`
	PlanExecutionID string             `json:"planExecutionId,omitempty"`
	Drifted         bool               `json:"drifted"`
	Resources       []string           `json:"resources,omitempty"`
	Repair          *model.DriftRepair `json:"repair,omitempty"`
	// Gone says the stack (or its drift record) no longer exists: the
	// check deleted its schedule and did nothing else.
	Gone bool `json:"gone,omitempty"`
}

// DriftCheckWorkflow is the action of a stack's drift schedule: a dry-run
// (a child DryRunWorkflow) of the package the stack last applied, read
// from the stack's record, whose changes are the drift. It records the
// result as the stack's last check, sets the CairnDrift search attribute
// on itself, sends drift.detected to the stack's hooks, and with repair on
// applies the package again as a child ApplyWorkflow under the stack's
// lock id: when another apply or destroy holds the lock the repair is
// skipped and recorded so. It runs only under a drift check id of its
// stack (the schedule's id and the time, see contract.DriftScheduleID).
func DriftCheckWorkflow(ctx workflow.Context, in DriftInput) (*DriftResult, error) {
	if err := checkDriftRun(ctx, in.StackID); err != nil {
		return nil, err
	}
	execID := ExecutionID(ctx, Settings{})
	queue := workflow.GetInfo(ctx).TaskQueueName
	actx := workflow.WithActivityOptions(ctx, controlOptions(queue, "read stack "+in.StackID+"'s record", time.Minute))
	var target contract.LoadDriftTargetResult
	err := workflow.ExecuteActivity(actx, contract.LoadDriftTargetName, contract.LoadDriftTargetInput{
		StackID: in.StackID, ExecutionID: execID,
	}).Get(ctx, &target)
	if err == nil && target.Gone {
		// The stack or its drift record is gone, and with it the
		// schedule and any hooks: nothing to check, no one to tell.
		workflow.GetLogger(ctx).Info("drift schedule of a stack that is gone: deleted", "stack", in.StackID)
		return &DriftResult{ExecutionID: execID, Gone: true}, nil
	}
	var res *DriftResult
	if err == nil {
		res, err = driftCheck(ctx, queue, in.StackID, execID, in.Resources, target)
	}
	notifyEnd(ctx, in.StackID, execID, model.ExecDrift, err)
	return res, err
}

func driftCheck(ctx workflow.Context, queue, stackID, execID string, only []string, target contract.LoadDriftTargetResult) (*DriftResult, error) {
	res := &DriftResult{ExecutionID: execID}
	rec := contract.RecordDriftInput{StackID: stackID, ExecutionID: execID, CheckedAt: workflow.Now(ctx).UTC()}
	var dryRunErr error
	switch {
	case target.SnapshotHash == "":
		rec.Error = "the stack has no applied package to compare with"
	case target.Error != "":
		// Parameters missing: planning without them would show drift
		// that is not there.
		rec.Error = target.Error
	default:
		res.PlanExecutionID, dryRunErr = driftDryRun(ctx, queue, stackID, only, target)
		rec.PlanExecutionID = res.PlanExecutionID
		if dryRunErr != nil {
			rec.Error = "dry-run failed: " + dryRunErr.Error()
		}
	}
	rctx := workflow.WithActivityOptions(ctx, recordOptions(queue, "record the drift check"))
	var recorded contract.RecordDriftResult
	if err := workflow.ExecuteActivity(rctx, contract.RecordDriftName, rec).Get(ctx, &recorded); err != nil {
		return nil, err
	}
	res.Drifted, res.Resources = recorded.Drifted, recorded.Resources
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Drift.ValueSet(res.Drifted)); err != nil {
		return nil, err
	}
	if dryRunErr != nil || target.Error != "" {
		return nil, temporal.NewNonRetryableApplicationError(rec.Error, DriftCheckFailedType, dryRunErr)
	}
	if !res.Drifted {
		return res, nil
	}
	notify(ctx, model.HookEvent{Type: model.EventDriftDetected, StackID: stackID, ExecutionID: execID,
		Kind: model.ExecDrift, Drifted: res.Resources}, false)
	if target.Repair {
		if target.RepairHeld != "" {
			res.Repair = &model.DriftRepair{Status: model.RepairSkipped, Reason: target.RepairHeld}
		} else {
			res.Repair = repairDrift(ctx, queue, stackID, only, target)
		}
		err := workflow.ExecuteActivity(rctx, contract.RecordDriftRepairName, contract.RecordDriftRepairInput{
			StackID: stackID, ExecutionID: execID, Repair: *res.Repair,
		}).Get(ctx, nil)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// driftDryRun plans the package against the stack as a child dry-run, on
// the cluster the stack recorded, and returns the dry-run's id, under
// which its plan is stored.
func driftDryRun(ctx workflow.Context, queue, stackID string, only []string, target contract.LoadDriftTargetResult) (string, error) {
	var nonce string
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return uuid.NewString() }).Get(&nonce); err != nil {
		return "", err
	}
	id := DryRunWorkflowID(stackID, nonce)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: id, TaskQueue: queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(driftChildAttrs(model.ExecDryRun, stackID, target)...),
		StaticSummary:         "drift check of stack " + stackID,
	})
	in := DryRunInput{Settings: Settings{ExecutionID: id, ControlQueue: queue, ClusterID: target.ClusterID, Only: only},
		StackID: stackID, SnapshotHash: target.SnapshotHash, Params: target.Params}
	return id, workflow.ExecuteChildWorkflow(cctx, DryRunWorkflow, in).Get(ctx, nil)
}

// driftChildAttrs are the search attributes of a check's dry-run or
// repair: its kind, the stack and the cluster the stack recorded.
func driftChildAttrs(kind model.ExecutionKind, stackID string, target contract.LoadDriftTargetResult) []temporal.SearchAttributeUpdate {
	attrs := []temporal.SearchAttributeUpdate{searchattr.Kind.ValueSet(string(kind)), searchattr.Stack.ValueSet(stackID)}
	if target.ClusterID != "" {
		attrs = append(attrs, searchattr.Cluster.ValueSet(target.ClusterID))
	}
	return attrs
}

// repairDrift applies the package again as a child apply holding the
// stack's lock id, on the cluster the stack recorded, and waits for it. It never runs next to another apply
// or destroy: when one holds the lock the repair is skipped, and so it is
// when one landed since the check read the stack (the apply finds another
// execution on the stack's record and changes nothing). The child is
// abandoned, not terminated, should the check end first.
func repairDrift(ctx workflow.Context, queue, stackID string, only []string, target contract.LoadDriftTargetResult) *model.DriftRepair {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: StackWorkflowID(stackID), TaskQueue: queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(driftChildAttrs(model.ExecApply, stackID, target)...),
		StaticSummary:         "repair the drift of stack " + stackID,
	})
	f := workflow.ExecuteChildWorkflow(cctx, ApplyWorkflow, ApplyInput{
		Settings: Settings{ControlQueue: queue, ClusterID: target.ClusterID, Only: only},
		StackID:  stackID, SnapshotHash: target.SnapshotHash, Params: target.Params, Base: target.Base,
	})
	var we workflow.Execution
	if err := f.GetChildWorkflowExecution().Get(ctx, &we); err != nil {
		var started *temporal.ChildWorkflowExecutionAlreadyStartedError
		if errors.As(err, &started) {
			return &model.DriftRepair{Status: model.RepairSkipped, Reason: "another apply or destroy of the stack was running"}
		}
		return &model.DriftRepair{Status: model.RepairFailed, Reason: err.Error()}
	}
	repair := &model.DriftRepair{Status: model.RepairApplied, ExecutionID: we.ID + "." + we.RunID}
	if err := f.Get(ctx, nil); err != nil {
		repair.Status, repair.Reason = model.RepairFailed, err.Error()
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == contract.PlanMovedType {
			// Applied since the check: the drift it saw is the new
			// package's business, and the next check's.
			repair.Status, repair.Reason = model.RepairSkipped, "the stack was applied since the check: "+app.Error()
		}
	}
	return repair
}
