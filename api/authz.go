package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// identityKey holds the request's identity.
const identityKey = "cairn.identity"

// identity is who a request acts as and what it may do.
type identity struct {
	// name is the principal's name; "" for CAIRN_API_TOKEN's holder and,
	// without any token configured, for everyone.
	name   string
	grants []model.Grant
}

// adminGrants are those of the environment's tokens.
var adminGrants = []model.Grant{{Role: model.RoleAdmin}}

func identityOf(c echo.Context) *identity {
	id, _ := c.Get(identityKey).(*identity)
	return id
}

// envBearers hashes the environment's tokens: token (anonymous) and the
// named ones.
func envBearers(token string, named map[string]string) []bearer {
	var want []bearer
	if token != "" {
		want = append(want, bearer{sum: sha256.Sum256([]byte(token))})
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		want = append(want, bearer{name: name, sum: sha256.Sum256([]byte(named[name]))})
	}
	return want
}

// authenticate finds who presents token: a store token ("cairn_…") by its
// record, anything else among the environment's tokens, each compared in
// constant time on its SHA-256 so neither a token's bytes nor which one
// matched leak through timing.
func (s *server) authenticate(ctx context.Context, token string) (*identity, error) {
	if s.oidc != nil && looksLikeJWT(token) {
		return s.oidc.authenticate(ctx, token)
	}
	if _, ok := splitAPIToken(token); ok {
		tok, err := s.tokens.lookup(ctx, token)
		if err != nil {
			return nil, err
		}
		return &identity{name: tok.Principal, grants: tok.Roles}, nil
	}
	got := sha256.Sum256([]byte(token))
	match := -1
	for i := range s.bearers {
		if subtle.ConstantTimeCompare(got[:], s.bearers[i].sum[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, errBadToken
	}
	return &identity{name: s.bearers[match].name, grants: adminGrants}, nil
}

// access authenticates and authorizes every request by the route's rule
// (authzRules); a route without one is refused to everyone. Without any
// token configured (the server then answers loopback only) a request
// without a token acts as admin; one presenting a token is held to it.
func (s *server) access(required bool, rules map[string]rule) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r, known := rules[routeKey(c.Request().Method, c.Path())]
			if known && (r.target == tOpen || r.target == tNode) {
				return next(c)
			}
			if !known && uiPath(c.Request().URL.Path) && !routed(c) {
				return next(c) // the live pages' 404s carry nothing
			}
			id, err := s.signIn(c, required)
			if err != nil {
				return err
			}
			c.Set(identityKey, id)
			if id.name != "" {
				c.Set(principalKey, id.name)
			}
			if !known {
				if !routed(c) {
					return next(c) // 404 or 405, to a signed-in caller
				}
				return &Error{Status: http.StatusForbidden, Message: fmt.Sprintf("route %s %s has no permission rule: refused", c.Request().Method, c.Path())}
			}
			if err := s.check(c, id, r); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// routed reports whether the request matched a registered route (not
// echo's not-found or method-not-allowed answer).
func routed(c echo.Context) bool {
	p := c.Path()
	if p == "" {
		return false
	}
	for _, rt := range c.Echo().Routes() {
		if rt.Path == p && rt.Method == c.Request().Method {
			return true
		}
	}
	return false
}

// signIn reads the bearer token.
func (s *server) signIn(c echo.Context, required bool) (*identity, error) {
	header := c.Request().Header.Get(echo.HeaderAuthorization)
	if !required && !strings.Contains(header, apiTokenPrefix) {
		// No token configured: every request acts as admin (the server
		// answers loopback only), and only a store token presented is
		// held to its grants.
		return &identity{grants: adminGrants}, nil
	}
	scheme, given, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, newError(http.StatusUnauthorized, "missing bearer token")
	}
	id, err := s.authenticate(c.Request().Context(), strings.TrimSpace(given))
	if errors.Is(err, errBadToken) {
		return nil, newError(http.StatusUnauthorized, "%s", err.Error())
	}
	if err != nil {
		return nil, internalError(err)
	}
	return id, nil
}

// check applies rule r to the request.
func (s *server) check(c echo.Context, id *identity, r rule) error {
	switch r.target {
	case tSignedIn:
		return nil
	case tGlobal:
		return s.require(c, id, r.role, "", "")
	case tSomewhere:
		for _, g := range id.grants {
			if g.Role.Implies(r.role) {
				return nil
			}
		}
		return forbidden(id, r.role, "*", "")
	case tStack:
		setTarget(c, model.ScopeStack, c.Param("id"))
		return s.require(c, id, r.role, model.ScopeStack, c.Param("id"))
	case tCluster:
		setTarget(c, model.ScopeCluster, c.Param("id"))
		return s.require(c, id, r.role, model.ScopeCluster, c.Param("id"))
	case tRelease:
		setTarget(c, model.ScopeRelease, c.Param("id"))
		return s.require(c, id, r.role, model.ScopeRelease, c.Param("id"))
	case tExecution:
		return s.requireOnExecution(c, id, r.role, c.Param("id"))
	case tCodec:
		if strings.HasSuffix(c.Request().URL.Path, "/decode") {
			return s.require(c, id, model.RoleViewer, "", "")
		}
		return s.require(c, id, model.RoleAdmin, "", "")
	}
	return &Error{Status: http.StatusForbidden, Message: "route has no permission rule: refused"}
}

// require answers nil when id holds role on the resource (kind "": on
// every resource), or the 403 naming what is missing.
func (s *server) require(c echo.Context, id *identity, role model.Role, kind model.ScopeKind, resID string) error {
	ok, err := s.holds(c.Request().Context(), id, role, kind, resID)
	if err != nil {
		return internalError(err)
	}
	if !ok {
		return forbidden(id, role, kind, resID)
	}
	return nil
}

// allowed is require without the error: whether id holds role there.
func (s *server) allowed(c echo.Context, role model.Role, kind model.ScopeKind, resID string) bool {
	id := identityOf(c)
	if id == nil {
		return false
	}
	ok, err := s.holds(c.Request().Context(), id, role, kind, resID)
	return err == nil && ok
}

// holds reads the resource's labels only when a grant's selector needs
// them.
func (s *server) holds(ctx context.Context, id *identity, role model.Role, kind model.ScopeKind, resID string) (bool, error) {
	return grantsHold(id.grants, role, kind, resID, s.labelsOnce(ctx, kind, resID))
}

// grantsHold reports whether grants give role on kind resID; labels is
// asked for the resource's labels only when a selector needs them.
func grantsHold(grants []model.Grant, role model.Role, kind model.ScopeKind, resID string, labels func() (map[string]string, error)) (bool, error) {
	for _, g := range grants {
		if !g.Role.Implies(role) {
			continue
		}
		if g.Holds(role, kind, resID, nil) {
			return true, nil
		}
		if g.Selector == "" || kind == "" || resID == "" {
			continue
		}
		l, err := labels()
		if err != nil {
			return false, err
		}
		if g.Holds(role, kind, resID, l) {
			return true, nil
		}
	}
	return false, nil
}

// labelsOnce returns the labels of kind resID, read from the store on the
// first call only.
func (s *server) labelsOnce(ctx context.Context, kind model.ScopeKind, resID string) func() (map[string]string, error) {
	var (
		labels map[string]string
		err    error
		read   bool
	)
	return func() (map[string]string, error) {
		if !read {
			read = true
			if labels, err = s.store.Labels(ctx, kind, resID); err != nil {
				err = fmt.Errorf("labels of %s %q: %w", kind, resID, err)
			}
		}
		return labels, err
	}
}

// forbidden is the 403 naming the missing role and scope (kind "": every
// resource, kind "*": any scope).
func forbidden(id *identity, role model.Role, kind model.ScopeKind, resID string) error {
	who := "this token"
	if id.name != "" {
		who = fmt.Sprintf("principal %q", id.name)
	}
	var scope string
	switch kind {
	case "":
		scope = "every resource (an unscoped grant)"
	case "*":
		scope = "any scope"
	default:
		scope = fmt.Sprintf("%s %q", kind, resID)
	}
	return &Error{Status: http.StatusForbidden,
		Message: fmt.Sprintf("%s lacks role %s on %s", who, role, scope),
		Details: []model.ErrorDetail{{Path: "role", Message: string(role)}, {Path: "scope", Message: scope}}}
}

// executionOwners answers what an execution acts on without querying it
// (starter.Starter.Owner); executions that cannot are described instead.
type executionOwners interface {
	Owner(ctx context.Context, id string) (model.ExecutionKind, string, string, error)
}

// requireOnExecution holds a graph execution to its cluster, any other to
// its stack.
func (s *server) requireOnExecution(c echo.Context, id *identity, role model.Role, execID string) error {
	setTarget(c, "execution", execID)
	if ok, _ := s.holds(c.Request().Context(), id, role, "", ""); ok {
		return nil // an unscoped grant: no lookup
	}
	if s.exec == nil {
		return forbidden(id, role, "", "")
	}
	kind, stackID, clusterID, err := s.executionOwner(c.Request().Context(), execID)
	if errors.Is(err, starter.ErrNotFound) {
		return forbidden(id, role, "execution", execID)
	}
	if err != nil {
		return s.executionError(err, execID)
	}
	if stackID != "" {
		setTarget(c, model.ScopeStack, stackID)
	}
	if clusterID != "" {
		setTarget(c, model.ScopeCluster, clusterID)
	}
	if kind == model.ExecGraph || stackID == "" {
		return s.require(c, id, role, model.ScopeCluster, clusterID)
	}
	return s.require(c, id, role, model.ScopeStack, stackID)
}

// executionOwner looks up (and remembers, bounded: they never change) an
// execution's kind, stack and cluster.
func (s *server) executionOwner(ctx context.Context, execID string) (model.ExecutionKind, string, string, error) {
	if o, ok := s.owners.Get(execID); ok {
		return o.kind, o.stack, o.cluster, nil
	}
	var (
		kind           model.ExecutionKind
		stack, cluster string
		err            error
	)
	if eo, ok := s.exec.(executionOwners); ok {
		kind, stack, cluster, err = eo.Owner(ctx, execID)
	} else {
		var ex *starter.Execution
		if ex, err = s.exec.Describe(ctx, execID); err == nil {
			kind, stack, cluster = ex.Kind, ex.StackID, ex.ClusterID
		}
	}
	if err != nil {
		return "", "", "", err
	}
	s.owners.Put(execID, execOwner{kind, stack, cluster})
	return kind, stack, cluster, nil
}

type execOwner struct {
	kind           model.ExecutionKind
	stack, cluster string
}

// Executions' owners never change: they are kept for ownerCacheTTL, at
// most ownerCacheMax.
const (
	ownerCacheMax = 4096
	ownerCacheTTL = time.Hour
)

// visibleFilter answers which resources of kind id may read (viewer),
// reading every label of the kind once when a selector needs them.
func (s *server) visibleFilter(c echo.Context, kind model.ScopeKind) (func(resID string) bool, error) {
	id := identityOf(c)
	if id == nil {
		return func(string) bool { return false }, nil
	}
	var labels map[string]map[string]string
	for _, g := range id.grants {
		if !g.Role.Implies(model.RoleViewer) {
			continue
		}
		if g.Unscoped() {
			return func(string) bool { return true }, nil
		}
		if g.Selector != "" && labels == nil {
			var err error
			if labels, err = s.store.AllLabels(c.Request().Context(), kind); err != nil {
				return nil, internalError(err)
			}
		}
	}
	return func(resID string) bool {
		for _, g := range id.grants {
			if g.Holds(model.RoleViewer, kind, resID, labels[resID]) {
				return true
			}
		}
		return false
	}, nil
}

// requireRouteRoleOn holds the request to its route's role on one more
// resource ("" for none): a stack's run that goes to a cluster needs the
// role on the cluster too, whose nodes run the stack's resources.
func (s *server) requireRouteRoleOn(c echo.Context, kind model.ScopeKind, resID string) error {
	id := identityOf(c)
	if resID == "" || id == nil {
		return nil
	}
	r, ok := s.rules[routeKey(c.Request().Method, c.Path())]
	if !ok {
		return &Error{Status: http.StatusForbidden, Message: "route has no permission rule: refused"}
	}
	setTarget(c, kind, resID)
	return s.require(c, id, r.role, kind, resID)
}
