package api

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// maxGrants bounds the grants of one token, and maxScopeIDs the ids of one
// grant, so a token record stays small.
const (
	maxGrants   = 32
	maxScopeIDs = 256
)

func (s *server) registerTeams(e *echo.Echo) {
	e.Add(http.MethodPost, "/v1/principals", s.createPrincipal)
	e.Add(http.MethodGet, "/v1/principals", s.listPrincipals)
	e.Add(http.MethodGet, "/v1/principals/:id", s.getPrincipal)
	e.Add(http.MethodDelete, "/v1/principals/:id", s.deletePrincipal)
	e.Add(http.MethodPost, "/v1/tokens", s.createToken)
	e.Add(http.MethodGet, "/v1/tokens", s.listTokens)
	e.Add(http.MethodDelete, "/v1/tokens/:id", s.deleteToken)
	e.Add(http.MethodGet, "/v1/whoami", s.whoami)
	e.Add(http.MethodGet, "/v1/audit", s.listAudit)
}

func (s *server) createPrincipal(c echo.Context) error {
	var in model.PrincipalInput
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	if in.Kind == "" {
		in.Kind = model.PrincipalUser
	}
	var details []model.ErrorDetail
	if !plainID(in.Name, 64) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "name", Message: "name must be 1 to 64 letters, digits, '-', '_' or '.'"})
	}
	if in.Kind != model.PrincipalUser && in.Kind != model.PrincipalService {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "kind", Message: fmt.Sprintf("kind %q is not \"user\" or \"service\"", in.Kind)})
	}
	if len(details) > 0 {
		return invalid("invalid principal", details)
	}
	if _, taken := s.cfg.Tokens[in.Name]; taken {
		// One name, one holder: approvals and the audit trail record the
		// name alone.
		return conflict("principal %q already exists: it names a token of CAIRN_API_TOKENS", in.Name)
	}
	p := &model.Principal{Name: in.Name, Kind: in.Kind}
	if err := s.store.CreatePrincipal(c.Request().Context(), p); err != nil {
		return storeError(err, fmt.Sprintf("principal %q", in.Name))
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/principals/"+p.ID)
	return c.JSON(http.StatusCreated, p)
}

func (s *server) listPrincipals(c echo.Context) error {
	list, err := s.store.ListPrincipals(c.Request().Context())
	if err != nil {
		return storeError(err, "principals")
	}
	return c.JSON(http.StatusOK, model.PrincipalList{Principals: list})
}

func (s *server) getPrincipal(c echo.Context) error {
	p, err := s.store.GetPrincipal(c.Request().Context(), c.Param("id"))
	if err != nil {
		return storeError(err, fmt.Sprintf("principal %q", c.Param("id")))
	}
	return c.JSON(http.StatusOK, p)
}

// deletePrincipal deletes a principal (by id or name) and its tokens,
// which this server refuses at once.
func (s *server) deletePrincipal(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := s.store.GetPrincipal(ctx, c.Param("id"))
	if err != nil {
		return storeError(err, fmt.Sprintf("principal %q", c.Param("id")))
	}
	if err := s.store.DeletePrincipal(ctx, p.ID); err != nil {
		return storeError(err, fmt.Sprintf("principal %q", p.Name))
	}
	s.tokens.forgetAll()
	return c.NoContent(http.StatusNoContent)
}

// checkGrants refuses unknown roles, bad ids and selectors, and more than
// the bounds.
func checkGrants(grants []model.Grant) []model.ErrorDetail {
	var details []model.ErrorDetail
	bad := func(path, msg string) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: path, Message: msg})
	}
	if len(grants) == 0 {
		bad("roles", "give at least one role")
	}
	if len(grants) > maxGrants {
		bad("roles", fmt.Sprintf("%d roles, at most %d", len(grants), maxGrants))
		return details
	}
	for i, g := range grants {
		at := fmt.Sprintf("roles[%d]", i)
		if !g.Role.Valid() {
			bad(at+".role", fmt.Sprintf("role %q is not one of %s", g.Role, joinQuoted(model.Roles)))
		}
		for field, ids := range map[string][]string{"stacks": g.Stacks, "clusters": g.Clusters, "releases": g.Releases} {
			if len(ids) > maxScopeIDs {
				bad(at+"."+field, fmt.Sprintf("%d ids, at most %d", len(ids), maxScopeIDs))
				continue
			}
			for j, id := range ids {
				if !validID(id) {
					bad(fmt.Sprintf("%s.%s[%d]", at, field, j), fmt.Sprintf("%q is not an id", id))
				}
			}
		}
		if g.Selector != "" {
			if _, err := model.ParseSelector(g.Selector); err != nil {
				bad(at+".selector", err.Error())
			}
		}
	}
	return details
}

// createToken makes a token for a principal: the answer is the only time
// the token is shown; the store keeps its SHA-256.
func (s *server) createToken(c echo.Context) error {
	var in model.TokenInput
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	details := checkGrants(in.Roles)
	if in.Principal == "" {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "principal", Message: "principal is required"})
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(time.Now()) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "expiresAt", Message: "expiresAt is not in the future"})
	}
	if len(details) > 0 {
		return invalid("invalid token request", details)
	}
	ctx := c.Request().Context()
	p, err := s.store.GetPrincipal(ctx, in.Principal)
	if errors.Is(err, store.ErrNotFound) {
		return invalid("invalid token request", []model.ErrorDetail{{Document: requestSource, Path: "principal", Message: fmt.Sprintf("principal %q does not exist", in.Principal)}})
	}
	if err != nil {
		return storeError(err, "principal")
	}
	id, token := newAPIToken()
	sum := sha256.Sum256([]byte(token))
	t := &model.Token{ID: id, PrincipalID: p.ID, Principal: p.Name, Prefix: token[:tokenShownPrefix], Roles: in.Roles, ExpiresAt: in.ExpiresAt}
	if err := s.store.CreateToken(ctx, t, sum[:]); err != nil {
		return storeError(err, "token")
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusCreated, model.TokenCreated{ID: id, Token: token, Record: *t})
}

func (s *server) listTokens(c echo.Context) error {
	list, err := s.store.ListTokens(c.Request().Context())
	if err != nil {
		return storeError(err, "tokens")
	}
	return c.JSON(http.StatusOK, model.TokenList{Tokens: list})
}

// deleteToken revokes a token: this server refuses it at once, others
// sharing the store within tokenCacheTTL.
func (s *server) deleteToken(c echo.Context) error {
	id := c.Param("id")
	if err := s.store.DeleteToken(c.Request().Context(), id); err != nil {
		return storeError(err, fmt.Sprintf("token %q", id))
	}
	s.tokens.forget(id)
	return c.NoContent(http.StatusNoContent)
}

// whoami answers the request's principal and grants; with ?execution=,
// also what it may do to that execution (the live page hides the rest).
func (s *server) whoami(c echo.Context) error {
	id := identityOf(c)
	out := model.Whoami{Principal: id.name, Roles: id.grants}
	if execID := c.QueryParam("execution"); execID != "" {
		out.Can = []string{}
		for _, a := range []struct {
			role    model.Role
			actions []string
		}{{model.RoleDeployer, []string{"cancel", "retry", "decide"}}, {model.RoleApprover, []string{"approve"}}} {
			if s.requireOnExecution(c, id, a.role, execID) == nil {
				out.Can = append(out.Can, a.actions...)
			}
		}
	}
	return c.JSON(http.StatusOK, out)
}

// parseBounded reads an integer in [lo, hi].
func parseBounded(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q must be an integer between %d and %d", v, lo, hi)
	}
	return n, nil
}

// parseSince reads an RFC 3339 time or a duration back from now ("24h").
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("since %q is neither an RFC 3339 time nor a duration", v)
	}
	return t, nil
}
