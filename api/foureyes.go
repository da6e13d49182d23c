package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// stackApproval is the approval an apply of stack stackID waits for: the
// stack's four-eyes policy when it has one, whatever the request asked
// (asked's timeout kept), else asked (?approve=required, or nil).
func (s *server) stackApproval(c echo.Context, stackID string, asked *contract.ApprovalSettings) (*contract.ApprovalSettings, error) {
	set, err := s.policyApproval(c, model.ScopeStack, stackID, "every apply", "this apply waits for them")
	if err != nil || set == nil {
		return asked, err
	}
	if asked != nil {
		set.Timeout = asked.Timeout
	}
	return set, nil
}

// clusterApproval is the approval a graph execution on cluster id waits
// for: the cluster's four-eyes policy, nil without one.
func (s *server) clusterApproval(c echo.Context, id string) (*contract.ApprovalSettings, error) {
	return s.policyApproval(c, model.ScopeCluster, id, "every graph execution", "this execution planned and waits for them")
}

// policyApproval is the approval target id's four-eyes policy asks of
// what (nil without a policy); the author is the request's principal.
// One store read for the policy, one for who may approve.
func (s *server) policyApproval(c echo.Context, target model.ScopeKind, id, what, waits string) (*contract.ApprovalSettings, error) {
	ctx := c.Request().Context()
	p, err := s.approvalPolicy(ctx, target, id)
	if err != nil || p == nil {
		return nil, err
	}
	set := &contract.ApprovalSettings{ApprovalRule: model.ApprovalRule{Required: p.Required, AuthorMayApprove: p.AuthorMayApprove, Author: principal(c),
		Policy: fmt.Sprintf("%s %s requires %d approval(s) of %s (four eyes): %s", target, id, p.Required, what, waits)}}
	if set.MayApprove, err = s.mayApproveNames(ctx, target, id, set.Author, p.AuthorMayApprove); err != nil {
		return nil, err
	}
	return set, nil
}

// refuseUnderFourEyes refuses a destroy of a stack under a four-eyes
// policy with 409: a destroy has no plan to approve, so the policy is
// cleared first (DELETE /v1/stacks/{id}/approvals, an admin's act).
func (s *server) refuseUnderFourEyes(c echo.Context, stackID string) error {
	p, err := s.approvalPolicy(c.Request().Context(), model.ScopeStack, stackID)
	if err != nil || p == nil {
		return err
	}
	return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
		"stack %s requires %d approval(s) of every change (four eyes) and a destroy cannot wait for one: clear its approvals (DELETE /v1/stacks/%s/approvals) first",
		stackID, p.Required, stackID)}
}

// refuseRetryUnderFourEyes refuses, with 409, a retry of an apply,
// destroy or graph execution whose stack or cluster is under a four-eyes
// policy: a retry would run without approval; apply or execute anew
// (which waits for it).
func (s *server) refuseRetryUnderFourEyes(c echo.Context, kind model.ExecutionKind, stackID, clusterID string) error {
	t, id := model.ScopeStack, stackID
	switch kind {
	case model.ExecApply, model.ExecDestroy:
	case model.ExecGraph:
		t, id = model.ScopeCluster, clusterID
	default:
		return nil
	}
	if id == "" {
		return nil
	}
	p, err := s.approvalPolicy(c.Request().Context(), t, id)
	if err != nil || p == nil {
		return err
	}
	return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
		"%s %s requires %d approval(s) (four eyes): a retry would run without one; start anew, and it waits for approval", t, id, p.Required)}
}
