package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
)

// An approved plan is a dry-run that, once its plan is stored, waits for
// the "approval" Update. It holds no stack lock while it waits (for days
// if need be), so other applies of the stack go on; instead it notes the
// stack's last execution before planning (the base), and an approval
// checks, before anything changes, that the plan still holds:
//
//  1. the stack's record is still the base's (no apply or destroy landed);
//  2. the package planned again now, from the same snapshot and
//     parameters, shows every step as the approved plan did (same action,
//     changes and before-state, compared as shown: redacted and
//     fingerprinted alike).
//
// When it holds, the approval starts the apply of the same snapshot as a
// child under the stack's lock id, which checks the base once more under
// the lock, so no apply can land between that check and its own changes.
// When it does not, the approval is refused (PlanMovedType, naming what
// moved) and the execution ends as stale, having changed nothing: a plan
// that moved cannot become the one shown again, so it is made anew. A
// rejection, or no decision within the timeout, ends it changing nothing.

// ApprovalUpdate is the Update that approves or rejects a waiting plan.
const ApprovalUpdate = "approval"

// StackBusyType marks an approval refused because another apply or
// destroy of the stack runs; the plan keeps waiting.
const StackBusyType = "StackBusy"

// AwaitingApproval is model.ProgressPage.Awaiting while a plan waits for
// approval.
const AwaitingApproval = "approval"

// maxApprovalComment bounds an approval's comment (bytes).
const maxApprovalComment = 2000

// ApprovedPlan tells an apply it runs a plan approved in execution Plan,
// made when the stack's last execution was Base: it refuses to run when
// the stack moved since.
type ApprovedPlan struct {
	Plan string `json:"plan"`
	Base string `json:"base"`
}

// approvalRun is a waiting plan's state, shared by the run loop and the
// Update handler.
type approvalRun struct {
	in     DryRunInput
	opts   ExecOptions
	plan   model.Summary
	state  model.Approval
	busy   bool // an approval is being checked
	done   bool
	checks int
	child  workflow.ChildWorkflowFuture
	// shown is the status last written to the CairnApproval search
	// attribute; awaiting keeps CairnAwaiting "approval" while the plan
	// awaits one.
	shown    model.ApprovalStatus
	awaiting awaitingMark
	// memo is the execution's memo of operator acts.
	memo *memoLog
}

// ErrAuthorMayNotApprove is the message of an approval refused because
// its principal started the plan and the policy keeps authors out.
const ErrAuthorMayNotApprove = "the author of a plan may not approve it"

// fourEyes says the plan waits under a four-eyes policy (Required set):
// distinct approvers are counted and the author kept out. Without one, a
// single approval by anyone applies it, as before policies existed.
func (a *approvalRun) fourEyes() bool { return a.state.Required > 0 }

// approvedBy says whether principal by already approved the plan.
func (a *approvalRun) approvedBy(by string) bool {
	for _, v := range a.state.Approvals {
		if v.By == by {
			return true
		}
	}
	return false
}

// stackBase reads the stack's last execution, before planning.
func stackBase(ctx workflow.Context, opts ExecOptions, stackID string) (string, error) {
	res, err := checkPlan(ctx, opts, contract.CheckPlanInput{StackID: stackID})
	if err != nil {
		return "", err
	}
	return res.Base, nil
}

// checkPlan runs the CheckPlan activity on the control plane.
func checkPlan(ctx workflow.Context, opts ExecOptions, in contract.CheckPlanInput) (contract.CheckPlanResult, error) {
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue, "check the plan still holds", 5*time.Minute))
	var res contract.CheckPlanResult
	if err := workflow.ExecuteActivity(actx, contract.CheckPlanName, in).Get(ctx, &res); err != nil {
		return res, fmt.Errorf("check plan: %w", err)
	}
	return res, nil
}

// planMoved is the failure of an approval or approved apply whose plan no
// longer holds; it carries the check's result.
func planMoved(res contract.CheckPlanResult) error {
	return temporal.NewNonRetryableApplicationError("the plan no longer holds: "+res.String(), contract.PlanMovedType, nil, res)
}

// awaitApproval waits for the plan res to be approved or rejected (or the
// timeout), then, when approved, for the apply it started; it fills in
// res.Approval. base is the stack's last execution when planning began.
func awaitApproval(ctx workflow.Context, t *tracker, opts ExecOptions, in DryRunInput, res *DryRunResult, base string) error {
	a := &approvalRun{in: in, opts: opts, plan: res.Summary, memo: &t.memo, state: model.Approval{
		Status: model.ApprovalAwaiting, Base: base, ApprovalRule: in.Approval.ApprovalRule,
	}}
	res.Approval = &a.state
	if len(res.Failures) > 0 || len(res.MissingEnvRefs) > 0 || len(res.MissingSecrets) > 0 {
		a.end(ctx, model.ApprovalRejected, "the plan is incomplete (failed steps or missing refs): it cannot be approved")
		a.settleParams(ctx)
		return nil
	}
	if in.Approval.Timeout > 0 {
		d := workflow.Now(ctx).Add(in.Approval.Timeout)
		a.state.Deadline = &d
	}
	t.approval = a
	err := workflow.SetUpdateHandlerWithOptions(ctx, ApprovalUpdate, a.decide,
		workflow.UpdateHandlerOptions{Validator: a.validate})
	if err != nil {
		return err
	}
	a.details(ctx)
	err = a.wait(ctx)
	a.settleParams(ctx)
	if err != nil {
		return err
	}
	if a.child == nil {
		return nil
	}
	var applied ApplyResult
	if err := a.child.Get(ctx, &applied); err != nil {
		return fmt.Errorf("apply %s: %w", a.state.ApplyExecutionID, err)
	}
	a.state.Report = &applied.Report
	a.details(ctx)
	return nil
}

// approvalParamsChange versions settling a waiting plan's parameters:
// runs recorded before it left them to retention.
const approvalParamsChange = "approval-params"

// settleParams settles the plan's parameters once it stopped waiting
// (contract.SettleParamsInput), on a context its cancellation does not
// reach: approved, the secrets it was given become the stack's; else
// they are deleted at once.
func (a *approvalRun) settleParams(ctx workflow.Context) {
	if a.in.Params == "" || workflow.GetVersion(ctx, approvalParamsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	in := contract.SettleParamsInput{StackID: a.in.StackID, Params: a.in.Params,
		Approved: a.state.Status == model.ApprovalApproved, Keep: a.in.Approval.KeepSecrets,
		Executions: []string{a.opts.ExecutionID}}
	for n := 1; n <= a.checks; n++ {
		in.Executions = append(in.Executions, fmt.Sprintf("%s.check-%d", a.opts.ExecutionID, n))
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, controlOptions(a.opts.ControlQueue, "settle the plan's parameters", time.Minute))
	if err := workflow.ExecuteActivity(actx, contract.SettleParamsName, in).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("the plan's parameters were not settled", "error", err)
	}
}

// wait waits until the plan is decided, expired or cancelled.
func (a *approvalRun) wait(ctx workflow.Context) error {
	in := a.in
	if in.Approval.Timeout > 0 {
		ok, err := workflow.AwaitWithTimeout(ctx, in.Approval.Timeout, func() bool { return a.done })
		if err != nil {
			return err
		}
		if !ok {
			// An approval being checked when time ran out was sent in time.
			if err := workflow.Await(ctx, func() bool { return a.done || !a.busy }); err != nil {
				return err
			}
			if !a.done {
				a.end(ctx, model.ApprovalExpired, fmt.Sprintf("no decision within %s", in.Approval.Timeout))
			}
		}
	} else if err := workflow.Await(ctx, func() bool { return a.done }); err != nil {
		return err
	}
	return nil
}

// validate accepts a decision only while the plan waits and no other is
// being checked.
func (a *approvalRun) validate(req model.ApprovalRequest) error {
	if len(req.Comment) > maxApprovalComment {
		return fmt.Errorf("comment is longer than %d bytes", maxApprovalComment)
	}
	if a.state.Status != model.ApprovalAwaiting {
		return fmt.Errorf("the plan is not awaiting approval (it is %s)", a.state.Status)
	}
	if a.busy {
		return errors.New("the plan is not awaiting approval (an approval is being checked)")
	}
	if req.Approve && a.fourEyes() && !a.state.AuthorMayApprove && req.By == a.state.Author {
		return fmt.Errorf("%s: %s started it", ErrAuthorMayNotApprove, principalName(req.By))
	}
	return nil
}

// principalName names principal p ("" is the anonymous token's).
func principalName(p string) string {
	if p == "" {
		return "the anonymous token"
	}
	return p
}

// decide is the approval Update handler. A rejection ends the plan. An
// approval checks that the plan holds (see the package's comment) and
// starts the apply; it answers once the apply started, or with
// PlanMovedType (the plan ended as stale) or StackBusyType (it keeps
// waiting).
func (a *approvalRun) decide(ctx workflow.Context, req model.ApprovalRequest) (model.Approval, error) {
	a.busy = true
	defer func() { a.busy = false }()
	by, err := a.vouch(ctx, req)
	if err != nil {
		return model.Approval{}, err
	}
	req.By = by
	if req.Approve && a.fourEyes() && !a.state.AuthorMayApprove && req.By == a.state.Author {
		return model.Approval{}, fmt.Errorf("%s: %s started it", ErrAuthorMayNotApprove, principalName(req.By))
	}
	if !req.Approve {
		a.decided(ctx, req)
		a.memo.add(ctx, MemoEntry{Action: "reject", By: req.By, Comment: req.Comment})
		a.end(ctx, model.ApprovalRejected, "")
		return a.state, nil
	}
	if a.fourEyes() {
		if a.approvedBy(req.By) {
			// The same approver twice counts once.
			return a.state, nil
		}
		if len(a.state.Approvals)+1 < a.state.Required {
			a.vote(ctx, req)
			a.busy = false // nothing to check: the plan keeps waiting
			a.details(ctx)
			return a.state, nil
		}
	}
	if a.in.StackID == "" {
		// A graph execution's plan: approved, the workflow runs it.
		a.decided(ctx, req)
		a.memo.add(ctx, MemoEntry{Action: "approve", By: req.By, Comment: req.Comment})
		if a.fourEyes() {
			a.state.Approvals = append(a.state.Approvals, model.ApprovalVote{By: req.By, At: workflow.Now(ctx), Comment: req.Comment})
		}
		a.end(ctx, model.ApprovalApproved, "")
		return a.state, nil
	}
	moved, err := a.recheck(ctx)
	if err != nil {
		return model.Approval{}, err
	}
	if !moved.Holds() {
		a.decided(ctx, req)
		if a.fourEyes() {
			a.vote(ctx, req)
		}
		a.end(ctx, model.ApprovalStale, moved.String())
		return model.Approval{}, planMoved(moved)
	}
	id, err := a.startApply(ctx)
	if err != nil {
		return model.Approval{}, err
	}
	a.decided(ctx, req)
	if a.fourEyes() {
		a.vote(ctx, req)
	} else {
		a.memo.add(ctx, MemoEntry{Action: "approve", By: req.By, Comment: req.Comment})
	}
	a.state.Status, a.state.ApplyExecutionID = model.ApprovalApproved, id
	a.done = true
	a.details(ctx)
	return a.state, nil
}

// approvalNonceChange versions the approval's nonce: decisions recorded
// before it consumed none.
const approvalNonceChange = "approval-nonce"

// vouch takes who answered from the nonce the starter recorded for req's
// act (vouchAct); the validator has already refused what it could tell
// from the payload.
func (a *approvalRun) vouch(ctx workflow.Context, req model.ApprovalRequest) (string, error) {
	if workflow.GetVersion(ctx, approvalNonceChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return req.By, nil
	}
	return vouchAct(ctx, a.opts.ControlQueue, req.Nonce, contract.ApprovalAct(req.Approve))
}

func (a *approvalRun) decided(ctx workflow.Context, req model.ApprovalRequest) {
	at := workflow.Now(ctx)
	a.state.By, a.state.Comment, a.state.At = req.By, req.Comment, &at
}

// vote counts req's approval (its principal's first) and notes it in
// the memo.
func (a *approvalRun) vote(ctx workflow.Context, req model.ApprovalRequest) {
	a.state.Approvals = append(a.state.Approvals, model.ApprovalVote{By: req.By, At: workflow.Now(ctx), Comment: req.Comment})
	a.memo.add(ctx, MemoEntry{Action: "approve", By: req.By, Comment: req.Comment})
}

// end closes the approval without applying anything.
func (a *approvalRun) end(ctx workflow.Context, status model.ApprovalStatus, reason string) {
	a.state.Status, a.state.Reason = status, reason
	a.done = true
	a.details(ctx)
}

// recheck checks the stack's base and, when it holds, plans the package
// again (as execution "<id>.check-<n>", its steps read as the dry-run
// read them) and compares the two plans. Cost: a dry-run.
func (a *approvalRun) recheck(ctx workflow.Context) (contract.CheckPlanResult, error) {
	in := contract.CheckPlanInput{StackID: a.in.StackID, Base: a.state.Base}
	res, err := checkPlan(ctx, a.opts, in)
	if err != nil || !res.Holds() {
		return res, err
	}
	a.checks++
	opts := a.opts
	opts.ExecutionID = fmt.Sprintf("%s.check-%d", a.opts.ExecutionID, a.checks)
	plan, err := prepare(ctx, opts, a.in.prepareInput(opts.ExecutionID, contract.ModeDryRun, a.in.StackID, a.in.SnapshotHash, a.in.Params))
	if err != nil {
		return res, err
	}
	out, err := (&tracker{execID: opts.ExecutionID}).execute(ctx, opts, plan)
	if err != nil {
		return res, err
	}
	err = storePlan(ctx, opts, "store plan", out)
	if err != nil {
		return res, err
	}
	in.Planned, in.Now = a.opts.ExecutionID, opts.ExecutionID
	res, err = checkPlan(ctx, a.opts, in)
	a.details(ctx)
	return res, err
}

// startApply starts the apply of the approved snapshot under the stack's
// lock id and returns its execution id; StackBusyType when the lock is
// held.
func (a *approvalRun) startApply(ctx workflow.Context) (string, error) {
	attrs := []temporal.SearchAttributeUpdate{
		searchattr.Kind.ValueSet(string(model.ExecApply)), searchattr.Stack.ValueSet(a.in.StackID),
	}
	if a.in.ClusterID != "" {
		attrs = append(attrs, searchattr.Cluster.ValueSet(a.in.ClusterID))
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            StackWorkflowID(a.in.StackID),
		TaskQueue:             workflow.GetInfo(ctx).TaskQueueName,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Cancelling the plan cancels its apply, which rolls back.
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		StaticSummary:         fmt.Sprintf("apply of the plan approved in %s to stack %s", a.opts.ExecutionID, a.in.StackID),
	})
	settings := a.in.Settings
	settings.ExecutionID, settings.RunGuards = "", false
	f := workflow.ExecuteChildWorkflow(cctx, ApplyWorkflow, ApplyInput{
		Settings: settings, StackID: a.in.StackID, SnapshotHash: a.in.SnapshotHash, Params: a.in.Params,
		Approved: &ApprovedPlan{Plan: a.opts.ExecutionID, Base: a.state.Base},
	})
	var we workflow.Execution
	if err := f.GetChildWorkflowExecution().Get(ctx, &we); err != nil {
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"stack %s is busy: another apply or destroy runs; approve again once it ended", a.in.StackID), StackBusyType, nil)
		}
		return "", fmt.Errorf("start the approved apply: %w", err)
	}
	a.child = f
	return we.ID + "." + we.RunID, nil
}

// details shows where the approval stands in the Temporal UI, and in
// the CairnApproval search attribute (so lists can filter plans awaiting
// approval and rejected ones) whenever its status changed, with
// CairnAwaiting "approval" while it awaits one.
func (a *approvalRun) details(ctx workflow.Context) {
	if a.state.Status != a.shown {
		if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Approval.ValueSet(string(a.state.Status))); err != nil {
			workflow.GetLogger(ctx).Warn("approval search attribute not updated", "error", err)
		} else {
			a.shown = a.state.Status
		}
	}
	awaiting := ""
	if a.state.Status == model.ApprovalAwaiting {
		awaiting = AwaitingApproval
	}
	a.awaiting.set(ctx, awaiting)
	p := a.plan
	line := fmt.Sprintf("plan: %d to create, %d to update, %d to delete, %d to run, %d unchanged; ",
		p.Create, p.Update, p.Delete, p.Run, p.Noop)
	s := a.state
	switch s.Status {
	case model.ApprovalAwaiting:
		line += "awaiting approval"
		if a.fourEyes() {
			line += fmt.Sprintf(" (%d of %d given)", len(s.Approvals), s.Required)
		}
		if s.Deadline != nil {
			line += " until " + s.Deadline.UTC().Format(time.RFC3339)
		}
		if a.busy {
			line += " (checking an approval)"
		}
	case model.ApprovalApproved:
		line += "approved" + byWhom(s.By)
		if s.ApplyExecutionID != "" {
			line += "; applied by " + s.ApplyExecutionID
		}
		if s.Report != nil {
			line += "; done"
		}
	default:
		line += string(s.Status) + byWhom(s.By)
		if s.Reason != "" {
			line += ": " + s.Reason
		}
	}
	workflow.SetCurrentDetails(ctx, line)
}

func byWhom(by string) string {
	if by == "" {
		return ""
	}
	return " by " + by
}
