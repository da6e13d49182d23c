package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// registerApprovalSettings adds the four-eyes settings of stacks and
// clusters: PUT|GET|DELETE /v1/{stacks|clusters}/{id}/approvals.
func (s *server) registerApprovalSettings(e *echo.Echo) {
	for _, t := range []model.ScopeKind{model.ScopeStack, model.ScopeCluster} {
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
func (s *server) putApprovals(t model.ScopeKind) echo.HandlerFunc {
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
func (s *server) getApprovals(t model.ScopeKind) echo.HandlerFunc {
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
func (s *server) deleteApprovals(t model.ScopeKind) echo.HandlerFunc {
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
func (s *server) approvalPolicy(ctx context.Context, t model.ScopeKind, id string) (*model.ApprovalPolicy, error) {
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
func mayApprove(t model.ScopeKind, id string) string {
	return fmt.Sprintf("principals with approver on %s %s", t, id)
}

// maxApproverNames bounds the names mayApproveNames lists.
const maxApproverNames = 20

// mayApproveNames says who may approve a plan of t id as it starts: the
// principals whose tokens (unexpired) hold approver there, and the named
// CAIRN_API_TOKENS (admins everywhere), sorted, at most maxApproverNames
// and a count of the rest, then the rule itself; the author is left out
// unless the policy lets them approve. Reads every token once and the
// target's labels once: a plan starts rarely.
func (s *server) mayApproveNames(ctx context.Context, kind model.ScopeKind, id, author string, authorMay bool) (string, error) {
	names := map[string]bool{}
	for name := range s.cfg.Tokens {
		names[name] = true
	}
	tokens, err := s.store.ListTokens(ctx)
	if err != nil {
		return "", fmt.Errorf("who may approve: %w", err)
	}
	labels := s.labelsOnce(ctx, kind, id)
	now := time.Now()
	for _, tok := range tokens {
		if names[tok.Principal] || (tok.ExpiresAt != nil && !tok.ExpiresAt.After(now)) {
			continue
		}
		ok, err := grantsHold(tok.Roles, model.RoleApprover, kind, id, labels)
		if err != nil {
			return "", fmt.Errorf("who may approve: %w", err)
		}
		if ok {
			names[tok.Principal] = true
		}
	}
	if !authorMay {
		delete(names, author)
	}
	list := slices.Sorted(maps.Keys(names))
	rule := mayApprove(kind, id)
	switch {
	case len(list) == 0:
		return "no principal yet: " + rule, nil
	case len(list) > maxApproverNames:
		return fmt.Sprintf("%s and %d more (%s)", strings.Join(list[:maxApproverNames], ", "), len(list)-maxApproverNames, rule), nil
	}
	return fmt.Sprintf("%s (%s)", strings.Join(list, ", "), rule), nil
}
