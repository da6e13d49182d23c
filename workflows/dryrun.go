package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// DryRunInput plans a package snapshot against a stack, or, without a
// snapshot, the package read from URLs (the stack's).
type DryRunInput struct {
	Settings
	StackID      string   `json:"stackId"`
	SnapshotHash string   `json:"snapshotHash"`
	URLs         []string `json:"urls,omitempty"`
	// Params names the parameters in the store (contract.ParamsExecution).
	Params string `json:"params,omitempty"`
	// Approval, when set, has the plan wait for approval and, approved,
	// applied (see approval.go).
	Approval *contract.ApprovalSettings `json:"approval,omitempty"`
}

// DryRunResult is a plan's summary; the plan's steps are in the store
// (step data kind "plan") for the API to page through.
type DryRunResult struct {
	ExecutionID    string            `json:"executionId"`
	Summary        model.Summary     `json:"summary"`
	Steps          int               `json:"steps"`
	MissingEnvRefs []string          `json:"missingEnvRefs"`
	MissingSecrets []string          `json:"missingSecrets"`
	Failures       []model.StepError `json:"failures,omitempty"`
	// Approval is how a plan awaiting approval ended.
	Approval *model.Approval `json:"approval,omitempty"`
}

// DryRunWorkflow reads and diffs every step without changing anything (no
// stack lock is taken) and stores the plan. It runs only under a dry-run
// id of its stack (DryRunWorkflowID). With in.Approval it then waits for
// the plan's approval and applies it (awaitApproval). Its end is sent to
// the stack's hooks that ask for dry-runs.
func DryRunWorkflow(ctx workflow.Context, in DryRunInput) (*DryRunResult, error) {
	if err := checkDryRun(ctx, in.Settings, in.StackID); err != nil {
		return nil, err
	}
	res, err := dryRun(ctx, in)
	notifyEnd(ctx, in.StackID, ExecutionID(ctx, in.Settings), model.ExecDryRun, err)
	return res, err
}

// dryRun is DryRunWorkflow once its input is checked.
func dryRun(ctx workflow.Context, in DryRunInput) (*DryRunResult, error) {
	opts := in.execOptions(ctx, contract.ModeDryRun, model.OnFailureContinue)
	opts.OnFailure = model.OnFailureContinue // a plan reports every problem
	t, err := newTracker(ctx, opts.ExecutionID)
	if err != nil {
		return nil, err
	}
	// After the tracker: its queries answer from the first task on.
	if err := consumeStart(ctx, in.Settings, in.StackID); err != nil {
		return nil, err
	}
	var base string
	if in.Approval != nil {
		// Read before planning: an apply landing in between makes the
		// approval refuse, never pass.
		if base, err = stackBase(ctx, opts, in.StackID); err != nil {
			return nil, err
		}
	}
	if in.SnapshotHash, err = packageHash(ctx, opts, in.StackID, in.SnapshotHash, in.URLs, in.Approval == nil); err != nil {
		return nil, err
	}
	plan, err := prepare(ctx, opts, in.prepareInput(opts.ExecutionID, contract.ModeDryRun, in.StackID, in.SnapshotHash, in.Params))
	if err != nil {
		return nil, err
	}
	out, err := t.execute(ctx, opts, plan)
	if err != nil {
		return nil, err
	}
	res := &DryRunResult{
		ExecutionID: opts.ExecutionID, Summary: out.Plan, Steps: plan.Steps,
		MissingEnvRefs: nonNil(out.MissingEnv), MissingSecrets: nonNil(out.MissingSecrets),
		Failures: out.Report.Failures,
	}
	if err := storePlan(ctx, opts, "store plan", out); err != nil {
		return nil, err
	}
	if in.Approval != nil && !out.Cancelled {
		if err := awaitApproval(ctx, t, opts, in, res, base); err != nil {
			t.finish(ctx, out)
			return nil, err
		}
	}
	t.finish(ctx, out)
	if out.Cancelled {
		return nil, out.Err()
	}
	return res, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
