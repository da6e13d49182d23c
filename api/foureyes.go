package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// stackApproval is the approval an apply of stack stackID waits for: the
// stack's four-eyes policy when it has one, whatever the request asked
// (asked's timeout kept), else asked (?approve=required, or nil). The
// author is the request's principal. One store read.
func (s *server) stackApproval(c echo.Context, stackID string, asked *contract.ApprovalSettings) (*contract.ApprovalSettings, error) {
	p, err := s.approvalPolicy(c.Request().Context(), store.ApprovalStack, stackID)
	if err != nil || p == nil {
		return asked, err
	}
	set := &contract.ApprovalSettings{}
	if asked != nil {
		set.Timeout = asked.Timeout
	}
	set.Required, set.AuthorMayApprove, set.Author = p.Required, p.AuthorMayApprove, principal(c)
	if set.MayApprove, err = s.mayApproveNames(c.Request().Context(), store.ApprovalStack, stackID, set.Author, p.AuthorMayApprove); err != nil {
		return nil, err
	}
	set.Policy = fmt.Sprintf("stack %s requires %d approval(s) of every apply (four eyes): this apply waits for them", stackID, p.Required)
	return set, nil
}

// refuseUnderFourEyes refuses a destroy of a stack under a four-eyes
// policy with 409: a destroy has no plan to approve, so the policy is
// cleared first (DELETE /v1/stacks/{id}/approvals, an admin's act).
func (s *server) refuseUnderFourEyes(c echo.Context, stackID string) error {
	p, err := s.approvalPolicy(c.Request().Context(), store.ApprovalStack, stackID)
	if err != nil || p == nil {
		return err
	}
	return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
		"stack %s requires %d approval(s) of every change (four eyes) and a destroy cannot wait for one: clear its approvals (DELETE /v1/stacks/%s/approvals) first",
		stackID, p.Required, stackID)}
}

// clusterApproval is the approval a graph execution on cluster id waits
// for: the cluster's four-eyes policy, nil without one. One store read.
func (s *server) clusterApproval(c echo.Context, id string) (*contract.ApprovalSettings, error) {
	p, err := s.approvalPolicy(c.Request().Context(), store.ApprovalCluster, id)
	if err != nil || p == nil {
		return nil, err
	}
	may, err := s.mayApproveNames(c.Request().Context(), store.ApprovalCluster, id, principal(c), p.AuthorMayApprove)
	if err != nil {
		return nil, err
	}
	return &contract.ApprovalSettings{
		Required: p.Required, AuthorMayApprove: p.AuthorMayApprove, Author: principal(c),
		MayApprove: may,
		Policy:     fmt.Sprintf("cluster %s requires %d approval(s) of every graph execution (four eyes): this execution planned and waits for them", id, p.Required),
	}, nil
}

// refuseRetryUnderFourEyes refuses, with 409, a retry of an apply,
// destroy or graph execution whose stack or cluster is under a four-eyes
// policy: a retry would run without approval; apply or execute anew
// (which waits for it).
func (s *server) refuseRetryUnderFourEyes(c echo.Context, kind model.ExecutionKind, stackID, clusterID string) error {
	t, id := store.ApprovalStack, stackID
	switch kind {
	case model.ExecApply, model.ExecDestroy:
	case model.ExecGraph:
		t, id = store.ApprovalCluster, clusterID
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
