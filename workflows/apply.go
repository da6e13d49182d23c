package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// ApplyInput applies a package snapshot to a stack, or, without a
// snapshot, the package read from URLs (the stack's).
type ApplyInput struct {
	Settings
	StackID      string   `json:"stackId"`
	SnapshotHash string   `json:"snapshotHash"`
	URLs         []string `json:"urls,omitempty"`
	// Params names the parameters in the store (contract.ParamsExecution).
	Params string `json:"params,omitempty"`
	// Approved, when set, is the plan this apply carries out: it runs
	// only if the stack's record is still the plan's base.
	Approved *ApprovedPlan `json:"approved,omitempty"`
	// Base, when set, is the stack's last execution the apply was decided
	// against (a drift check's repair): it runs only if the stack's record
	// still names it, so a repair never brings back an older package that
	// an apply landing after the check replaced.
	Base string `json:"base,omitempty"`
}

// ApplyResult is a finished apply or destroy.
type ApplyResult struct {
	ExecutionID string       `json:"executionId"`
	Report      model.Report `json:"report"`
	Changed     bool         `json:"changed"`
}

// ApplyWorkflow brings a stack to the package: it prepares the steps
// (creating, updating and deleting what left the package), runs them with
// the executor and records the stack. By default a failure rolls back every
// change and the stack record stays as it was; so does cancellation. It
// runs only under its stack's lock id (StackWorkflowID), else it fails with
// UntrustedInputType before doing anything.
// Its end is sent to the stack's hooks.
func ApplyWorkflow(ctx workflow.Context, in ApplyInput) (*ApplyResult, error) {
	if err := checkStackRun(ctx, in.Settings, in.StackID); err != nil {
		return nil, err
	}
	res, err := apply(ctx, in)
	notifyEnd(ctx, in.StackID, ExecutionID(ctx, in.Settings), model.ExecApply, err)
	return res, err
}

// apply is ApplyWorkflow once its input is checked.
func apply(ctx workflow.Context, in ApplyInput) (*ApplyResult, error) {
	opts := in.execOptions(ctx, contract.ModeApply, model.OnFailureRollback)
	t, err := newTracker(ctx, opts.ExecutionID)
	if err != nil {
		return nil, err
	}
	// After the tracker: its queries answer from the first task on.
	if err := consumeStart(ctx, in.Settings, in.StackID); err != nil {
		return nil, err
	}
	if base, ok := in.base(); ok {
		// Under the lock now: nothing can land between this check and
		// the changes.
		res, err := checkPlan(ctx, opts, contract.CheckPlanInput{StackID: in.StackID, Base: base})
		if err != nil {
			return nil, err
		}
		if !res.Holds() {
			return nil, planMoved(res)
		}
	}
	if in.SnapshotHash, err = packageHash(ctx, opts, in.StackID, in.SnapshotHash, in.URLs, false); err != nil {
		return nil, err
	}
	plan, err := prepare(ctx, opts, in.prepareInput(opts.ExecutionID, contract.ModeApply, in.StackID, in.SnapshotHash, in.Params))
	if err != nil {
		return nil, err
	}
	out, err := t.execute(ctx, opts, plan)
	if err != nil {
		return nil, err
	}
	switch {
	case !out.RolledBack && !out.Cancelled:
		err := writeRecord(ctx, opts, contract.WriteStackRecordInput{
			ExecutionID: opts.ExecutionID, StackID: in.StackID, SnapshotHash: in.SnapshotHash,
			ClusterID: plan.ClusterID, Changed: out.Report.Changed(), Partial: len(in.Only) > 0,
		})
		if err != nil {
			return nil, err
		}
	case out.RolledBack && len(out.Recreated) > 0:
		// The rollback brought deleted objects back under new ids: the
		// record keeps the previous state but must name them, or the next
		// apply would create duplicates. Nothing the stack declares changed.
		err := writeRecord(ctx, opts, contract.WriteStackRecordInput{
			ExecutionID: opts.ExecutionID, StackID: in.StackID, SnapshotHash: in.SnapshotHash, Partial: len(in.Only) > 0,
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

// base is the stack's last execution the apply must find on the stack's
// record before it changes anything, if any: an approved plan's base,
// else Base.
func (in ApplyInput) base() (string, bool) {
	if in.Approved != nil {
		return in.Approved.Base, true
	}
	return in.Base, in.Base != ""
}

// packageHash is the package snapshot a run plans: hash when the run names
// one, else the stack's URLs read into one (fetchPackage), else "".
func packageHash(ctx workflow.Context, opts ExecOptions, stackID, hash string, urls []string, allowEmpty bool) (string, error) {
	if hash != "" || len(urls) == 0 {
		return hash, nil
	}
	return fetchPackage(ctx, opts, stackID, urls, allowEmpty)
}

// fetchPackage reads a stack's URLs into a package snapshot and returns
// its hash.
func fetchPackage(ctx workflow.Context, opts ExecOptions, stackID string, urls []string, allowEmpty bool) (string, error) {
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue, "read the package from the stack's URLs", 10*time.Minute))
	var res contract.FetchPackageResult
	err := workflow.ExecuteActivity(actx, contract.FetchPackageName, contract.FetchPackageInput{
		StackID: stackID, URLs: urls, AllowEmpty: allowEmpty,
	}).Get(ctx, &res)
	if err != nil {
		return "", fmt.Errorf("read package: %w", err)
	}
	return res.SnapshotHash, nil
}
