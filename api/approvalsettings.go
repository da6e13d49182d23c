package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// registerApprovalSettings adds the four-eyes settings of stacks and
// clusters: PUT|GET|DELETE /v1/{stacks|clusters}/{id}/approvals.
func (s *server) registerApprovalSettings(e *echo.Echo) {
	for _, t := range []store.ApprovalTarget{store.ApprovalStack, store.ApprovalCluster} {
		path := "/v1/" + string(t) + "s/:id/approvals"
		e.Add(http.MethodPut, path, s.putApprovals(t))
		e.Add(http.MethodGet, path, s.getApprovals(t))
		e.Add(http.MethodDelete, path, s.deleteApprovals(t))
	}
}

// putApprovals sets the policy ({required: N, authorMayApprove}; required
// defaults to 1, at most model.MaxApprovers): from then on every apply of
// the stack, or graph execution on the cluster, waits for approval.
// Executions already started keep what they started with.
func (s *server) putApprovals(t store.ApprovalTarget) echo.HandlerFunc {
	return func(c echo.Context) error {
		var p model.ApprovalPolicy
		if err := decodeJSON(c, &p, true); err != nil {
			return err
		}
		if err := p.Normalize(); err != nil {
			return invalid("invalid approvals", []model.ErrorDetail{{Document: requestSource, Path: "required", Message: err.Error()}})
		}
		id := c.Param("id")
		if err := s.store.PutApprovalPolicy(c.Request().Context(), t, id, p); err != nil {
			return storeError(err, fmt.Sprintf("%s %q", t, id))
		}
		return c.JSON(http.StatusOK, p)
	}
}

// getApprovals answers the policy; 404 when the stack or cluster has none.
func (s *server) getApprovals(t store.ApprovalTarget) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		p, err := s.store.ApprovalPolicy(c.Request().Context(), t, id)
		if err != nil {
			return storeError(err, fmt.Sprintf("approvals of %s %q", t, id))
		}
		return c.JSON(http.StatusOK, p)
	}
}

// deleteApprovals clears the policy: later executions need no approval
// unless asked (?approve=required).
func (s *server) deleteApprovals(t store.ApprovalTarget) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		if err := s.store.DeleteApprovalPolicy(c.Request().Context(), t, id); err != nil {
			return storeError(err, fmt.Sprintf("approvals of %s %q", t, id))
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// approvalPolicy is the policy of a stack or cluster; nil when it has
// none.
func (s *server) approvalPolicy(ctx context.Context, t store.ApprovalTarget, id string) (*model.ApprovalPolicy, error) {
	p, err := s.store.ApprovalPolicy(ctx, t, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err, fmt.Sprintf("approvals of %s %q", t, id))
	}
	return p, nil
}

// mayApprove says who may approve an execution of the stack or cluster
// id: principals holding the approver role on it.
func mayApprove(t store.ApprovalTarget, id string) string {
	return fmt.Sprintf("principals with approver on %s %s", t, id)
}
