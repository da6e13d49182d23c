package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// Errors of Approve (wrapped).
var (
	// ErrNotAwaiting says the execution is not a plan awaiting approval.
	ErrNotAwaiting = errors.New("not awaiting approval")
	// ErrInvalidApproval says the request itself is refused.
	ErrInvalidApproval = errors.New("invalid approval")
	// ErrApproverNotAllowed says the principal may not approve this plan
	// (its author, under a policy that keeps authors out).
	ErrApproverNotAllowed = errors.New("approver not allowed")
)

// PlanMovedError refuses an approval whose plan no longer holds; the
// execution ended, having changed nothing.
type PlanMovedError struct {
	Execution string
	Moved     contract.CheckPlanResult
}

func (e *PlanMovedError) Error() string {
	return fmt.Sprintf("the plan of %s no longer holds: %s", e.Execution, e.Moved.String())
}

// Approve answers a plan awaiting approval (req.Approve false rejects it).
// An approval returns once the plan was checked and its apply started
// (Approval.ApplyExecutionID); it fails with *PlanMovedError when the
// stack or a planned resource moved, *ConflictError when another apply of
// the stack runs (the plan keeps waiting), ErrNotAwaiting otherwise.
// The act is recorded with its principal (req.By) under a one-time nonce
// the workflow consumes. Cost: one row write; an approval plans the
// package again (a dry-run's reads).
func (s *Starter) Approve(ctx context.Context, id string, req model.ApprovalRequest) (*model.Approval, error) {
	wfID, runID, info, err := s.describeOurs(ctx, id)
	if err != nil {
		return nil, err
	}
	if req.Nonce, err = s.actNonce(ctx, wfID, contract.ApprovalAct(req.Approve), req.By); err != nil {
		return nil, err
	}
	res, err := update[model.Approval](ctx, s.c, wfID, runID, workflows.ApprovalUpdate, req)
	if err == nil {
		return res, nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case contract.PlanMovedType:
			moved := &PlanMovedError{Execution: id}
			if app.HasDetails() {
				_ = app.Details(&moved.Moved)
			}
			return nil, moved
		case contract.ActNotIssuedType:
			return nil, fmt.Errorf("%w: %s", ErrInvalidApproval, workflows.ErrorMessage(err))
		case workflows.StackBusyType:
			stack := keyword(info.GetSearchAttributes().GetIndexedFields()[searchattr.Stack.GetName()])
			running := stackWorkflowID(stack)
			if d, derr := s.c.DescribeWorkflowExecution(ctx, running, ""); derr == nil {
				running = ExecutionID(running, d.GetWorkflowExecutionInfo().GetExecution().GetRunId())
			}
			return nil, &ConflictError{Running: running, Target: "stack " + stack}
		}
	}
	msg := err.Error()
	var done *serviceerror.NotFound
	switch {
	case strings.Contains(msg, "not awaiting approval"), strings.Contains(msg, "unknown update"):
		return nil, fmt.Errorf("%w: %s", ErrNotAwaiting, workflows.ErrorMessage(err))
	case strings.Contains(msg, workflows.ErrAuthorMayNotApprove):
		return nil, fmt.Errorf("%w: %s", ErrApproverNotAllowed, workflows.ErrorMessage(err))
	case strings.Contains(msg, "comment is longer"):
		return nil, fmt.Errorf("%w: %s", ErrInvalidApproval, workflows.ErrorMessage(err))
	case errors.As(err, &done), strings.Contains(msg, "workflow execution already completed"):
		return nil, fmt.Errorf("%w: %s", ErrFinished, id)
	}
	return nil, err
}
