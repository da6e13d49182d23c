package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// scopeOf is how the permission policy places a route, stated here apart
// from authzRules so that a rule that drifts from it fails the test.
type scopeOf string

const (
	sOpen      scopeOf = "open"      // anyone, no token
	sNode      scopeOf = "node"      // node tokens (never 403 for API tokens)
	sSignedIn  scopeOf = "signed-in" // any valid token; answers filtered
	sGlobal    scopeOf = "global"    // the role everywhere
	sAnywhere  scopeOf = "anywhere"  // the role on some scope
	sStack     scopeOf = "stack"
	sCluster   scopeOf = "cluster"
	sRelease   scopeOf = "release"
	sExecution scopeOf = "execution"  // the execution's stack
	sBodyStack scopeOf = "body-stack" // export of one stack, named in the body
)

type policy struct {
	role  model.Role
	scope scopeOf
}

// wantPolicy is the permission model of docs/security.md, route by route.
var wantPolicy = func() map[string]policy {
	v, p, d, a, g, ad := model.RoleViewer, model.RolePlanner, model.RoleDeployer, model.RoleApprover, model.RoleGraphAuthor, model.RoleAdmin
	m := map[string]policy{
		"GET /healthz": {"", sOpen}, "GET /readyz": {"", sOpen}, "GET /metrics": {v, sGlobal}, "GET /openapi.yaml": {"", sSignedIn},
		"POST /v1/packages/validate": {p, sAnywhere}, "POST /v1/stacks": {d, sAnywhere}, "GET /v1/stacks": {"", sSignedIn},
		"GET /v1/stacks/:id": {v, sStack}, "DELETE /v1/stacks/:id": {d, sStack}, "PUT /v1/stacks/:id/labels": {ad, sStack},
		"POST /v1/stacks/:id/dry-run": {p, sStack}, "POST /v1/stacks/:id/apply": {d, sStack},
		"POST /v1/stacks/:id/uploads": {p, sStack}, "GET /v1/stacks/:id/uploads/:upload": {p, sStack},
		"DELETE /v1/stacks/:id/uploads/:upload": {p, sStack}, "PUT /v1/stacks/:id/uploads/:upload/parts/:part": {p, sStack},
		"PUT /v1/stacks/:id/drift": {d, sStack}, "PATCH /v1/stacks/:id/drift": {d, sStack}, "GET /v1/stacks/:id/drift": {v, sStack},
		"DELETE /v1/stacks/:id/drift": {d, sStack}, "PUT /v1/stacks/:id/hooks": {ad, sStack}, "GET /v1/stacks/:id/hooks": {ad, sStack},
		"DELETE /v1/stacks/:id/hooks": {ad, sStack}, "POST /v1/export": {v, sBodyStack}, "GET /v1/kinds": {"", sSignedIn},
		"PUT /v1/stacks/:id/approvals": {ad, sStack}, "GET /v1/stacks/:id/approvals": {v, sStack}, "DELETE /v1/stacks/:id/approvals": {ad, sStack},
		"PUT /v1/clusters/:id/approvals": {ad, sCluster}, "GET /v1/clusters/:id/approvals": {v, sCluster}, "DELETE /v1/clusters/:id/approvals": {ad, sCluster},
		"GET /v1/kinds/:name":           {"", sSignedIn},
		"GET /v1/clusters/:id/settings": {v, sCluster}, "PUT /v1/clusters/:id/settings": {g, sCluster}, "PATCH /v1/clusters/:id/settings": {g, sCluster},
		"PUT /v1/clusters/:id/labels": {ad, sCluster}, "PUT /v1/releases/:id/labels": {ad, sRelease},
		"GET /v1/graphs": {"", sSignedIn}, "GET /v1/clusters/:id/graphs/:type/merged": {v, sCluster},
		"POST /v1/clusters/:id/executions": {d, sCluster}, "GET /v1/executions": {"", sSignedIn},
		"GET /v1/executions/:id": {v, sExecution}, "GET /v1/executions/:id/events": {v, sExecution},
		"GET /v1/executions/:id/graph": {v, sExecution}, "GET /v1/executions/:id/steps": {v, sExecution},
		"POST /v1/executions/:id/cancel": {d, sExecution}, "POST /v1/executions/:id/retry": {d, sExecution},
		"POST /v1/executions/:id/decision": {d, sExecution}, "POST /v1/executions/:id/approve": {a, sExecution},
		"POST /v1/executions/:id/reject": {a, sExecution},
		"GET /v1/agent/node":             {"", sNode}, "GET /v1/agent/data": {"", sNode}, "POST /v1/agent/data": {"", sNode}, "POST /v1/agent/facts": {"", sNode},
		"GET /v1/agent/watch": {"", sNode}, "POST /v1/agent/watch/events": {"", sNode},
		"POST /v1/clusters/:id/nodes/:node/token": {ad, sCluster}, "POST /v1/clusters/:id/nodes/:node/token/rotate": {ad, sCluster},
		"DELETE /v1/clusters/:id/nodes/:node/token": {ad, sCluster},
		"POST /v1/principals":                       {ad, sGlobal}, "GET /v1/principals": {ad, sGlobal}, "GET /v1/principals/:id": {ad, sGlobal},
		"DELETE /v1/principals/:id": {ad, sGlobal}, "POST /v1/tokens": {ad, sGlobal}, "GET /v1/tokens": {ad, sGlobal},
		"DELETE /v1/tokens/:id": {ad, sGlobal}, "GET /v1/whoami": {"", sSignedIn}, "GET /v1/audit": {"", sSignedIn},
		"GET /ui": {"", sOpen}, "GET /ui/": {"", sOpen}, "GET /ui/executions/:id": {"", sOpen}, "GET /ui/assets/:file": {"", sOpen},
	}
	for _, o := range []struct {
		coll  string
		scope scopeOf
	}{{"releases", sRelease}, {"plugins", sGlobal}, {"clusters", sCluster}} {
		read := o.scope
		if read == sGlobal {
			read = sSignedIn
		}
		b := "/v1/" + o.coll
		m["POST "+b] = policy{ad, sGlobal}
		m["GET "+b] = policy{"", sSignedIn}
		m["GET "+b+"/:id"] = policy{v, read}
		m["PUT "+b+"/:id"] = policy{ad, o.scope}
		m["DELETE "+b+"/:id"] = policy{ad, o.scope}
		m["GET "+b+"/:id/graphs"] = policy{v, read}
		m["GET "+b+"/:id/graphs/:type"] = policy{v, read}
		m["PUT "+b+"/:id/graphs/:type"] = policy{g, o.scope}
		m["DELETE "+b+"/:id/graphs/:type"] = policy{g, o.scope}
	}
	return m
}()

// implied is what each role grants, stated apart from model.Role.Implies.
var implied = map[model.Role][]model.Role{
	model.RoleViewer:      {model.RoleViewer},
	model.RolePlanner:     {model.RolePlanner, model.RoleViewer},
	model.RoleDeployer:    {model.RoleDeployer, model.RolePlanner, model.RoleViewer},
	model.RoleApprover:    {model.RoleApprover, model.RoleViewer},
	model.RoleGraphAuthor: {model.RoleGraphAuthor, model.RoleViewer},
	model.RoleAdmin:       model.Roles,
}

// TestEveryRouteRoleScope sends every registered route with a token of
// every role, scoped to one stack, cluster and release, at resources in
// and out of that scope, and with an unscoped token of the role: each
// answer is 403 exactly where the policy says.
func TestEveryRouteRoleScope(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 10*time.Minute)
	c := h.client

	// Every registered route has a rule and a policy.
	e, err := New(Config{}, Deps{Store: h.store})
	require.NoError(t, err)
	rules := authzRules()
	var routes []string
	for _, r := range e.Routes() {
		k := routeKey(r.Method, r.Path)
		if slices.Contains(routes, k) || strings.HasPrefix(r.Name, "github.com/labstack/echo") {
			continue
		}
		routes = append(routes, k)
		_, ruled := rules[k]
		require.True(t, ruled, "route %s has no permission rule", k)
		_, known := wantPolicy[k]
		require.True(t, known, "route %s has no policy in this test", k)
	}

	// Two of everything: one in scope, one out.
	dir := t.TempDir()
	stack := map[bool]string{}
	exec := map[bool]string{}
	for _, in := range []bool{true, false} {
		st, err := c.CreateStack(ctx, model.StackInput{Name: fmt.Sprintf("s-%v", in)})
		require.NoError(t, err)
		stack[in] = st.ID
		ex := h.applyWait(st.ID, fmt.Sprintf("kind: File\nmetadata: {name: f}\nspec: {path: %s/%v, content: x}\n", dir, in), client.ApplyOptions{})
		mustStatus(t, ex, model.ExecCompleted)
		exec[in] = ex.ID
		_, err = c.CreateRelease(ctx, model.ReleaseInput{ID: fmt.Sprintf("r-%v", in), Name: "r"})
		require.NoError(t, err)
		_, err = c.CreateCluster(ctx, model.ClusterInput{ID: fmt.Sprintf("c-%v", in), Name: "c"})
		require.NoError(t, err)
	}
	_, err = c.CreatePlugin(ctx, model.PluginInput{ID: "p", Name: "p"})
	require.NoError(t, err)
	_, err = c.CreatePrincipal(ctx, model.PrincipalInput{Name: "matrix", Kind: model.PrincipalService})
	require.NoError(t, err)
	token := func(g model.Grant) string {
		tk, err := c.CreateToken(ctx, model.TokenInput{Principal: "matrix", Roles: []model.Grant{g}})
		require.NoError(t, err)
		return tk.Token
	}

	type tcase struct {
		name   string
		scoped bool
		in     bool
	}
	cases := []tcase{{"scoped, in scope", true, true}, {"scoped, out of scope", true, false}, {"unscoped", false, false}}
	for _, role := range model.Roles {
		scopedTok := token(model.Grant{Role: role, Stacks: []string{stack[true]}, Clusters: []string{"c-true"}, Releases: []string{"r-true"}})
		unscopedTok := token(model.Grant{Role: role})
		for _, tc := range cases {
			tok := scopedTok
			if !tc.scoped {
				tok = unscopedTok
			}
			for _, k := range routes {
				pol := wantPolicy[k]
				method, path, _ := strings.Cut(k, " ")
				body := ""
				params := map[string]string{":upload": "u1", ":part": "1", ":type": "deploy", ":node": "n1", ":name": "File", ":file": "app.js"}
				switch pol.scope {
				case sStack:
					params[":id"] = stack[tc.in]
				case sCluster:
					params[":id"] = fmt.Sprintf("c-%v", tc.in)
				case sRelease:
					params[":id"] = fmt.Sprintf("r-%v", tc.in)
				case sExecution:
					params[":id"] = exec[tc.in]
				case sBodyStack:
					body = fmt.Sprintf(`{"stackId": %q}`, stack[tc.in])
				default:
					params[":id"] = "p"
				}
				if strings.HasPrefix(path, "/v1/principals/") || strings.HasPrefix(path, "/v1/tokens/") {
					params[":id"] = "nobody"
				}
				if path == "/v1/executions/:id/cancel" || path == "/v1/executions/:id/retry" {
					body = ""
				}
				for p, v := range params {
					path = strings.ReplaceAll(path, p, v)
				}
				if body == "" && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch) {
					body = "{}"
				}
				var want bool // allowed
				grants := slices.Contains(implied[role], pol.role)
				switch pol.scope {
				case sOpen, sNode, sSignedIn:
					want = true
				case sGlobal:
					want = !tc.scoped && grants
				case sAnywhere:
					want = grants
				default:
					want = grants && (!tc.scoped || tc.in)
				}
				status := sendAs(t, h.url, tok, method, path, body)
				if want {
					require.NotEqual(t, http.StatusForbidden, status, "%s with %s %s: refused, want allowed", k, role, tc.name)
					if pol.scope != sNode {
						require.NotEqual(t, http.StatusUnauthorized, status, "%s with %s %s", k, role, tc.name)
					}
				} else {
					require.Equal(t, http.StatusForbidden, status, "%s with %s %s: want 403", k, role, tc.name)
				}
			}
		}
	}
}

// sendAs makes one request and answers its status (0 for a stream still
// open after its headers: never a refusal, which answers at once).
func sendAs(t *testing.T, base, token, method, path, body string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode
}
