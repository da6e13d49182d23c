package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// apiStatus is the HTTP status of a client error (0 for none).
func apiStatus(err error) int {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// An admin gives the CI a token that may deploy stack web: it applies web,
// is refused db, graphs and approvals; a viewer scoped by label lists only
// web; a revoked token is refused; each of these is in the audit trail,
// and still there after a restart.
func TestTeamsEndToEnd(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		h := newCairn(t, cairnOptions{dbURL: be.url(t)})
		ctx := ctxTimeout(t, 5*time.Minute)
		admin := h.client
		dir := t.TempDir()
		pkg := func(name string) *client.Document {
			return &client.Document{Format: "yaml", Data: []byte(fmt.Sprintf("kind: File\nmetadata: {name: f}\nspec: {path: %s/%s, content: x}\n", dir, name))}
		}

		web, err := admin.CreateStack(ctx, model.StackInput{Name: "web", Labels: map[string]string{"env": "prod"}})
		require.NoError(t, err)
		db, err := admin.CreateStack(ctx, model.StackInput{Name: "db"})
		require.NoError(t, err)
		_, err = admin.CreateCluster(ctx, model.ClusterInput{ID: "prod", Name: "prod"})
		require.NoError(t, err)
		got, err := admin.GetStack(ctx, web.ID)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"env": "prod"}, got.Labels, "labels are shown")

		_, err = admin.CreatePrincipal(ctx, model.PrincipalInput{Name: "ci", Kind: model.PrincipalService})
		require.NoError(t, err)
		_, err = admin.CreatePrincipal(ctx, model.PrincipalInput{Name: "ci"})
		require.Equal(t, http.StatusConflict, apiStatus(err), "one principal per name")
		ciTok, err := admin.CreateToken(ctx, model.TokenInput{Principal: "ci", Roles: []model.Grant{{Role: model.RoleDeployer, Stacks: []string{web.ID}}}})
		require.NoError(t, err)
		require.NotContains(t, ciTok.Record.Prefix, ciTok.Token[len(ciTok.Record.Prefix):], "the record keeps only a prefix")
		ci, err := client.New(h.url, ciTok.Token)
		require.NoError(t, err)

		who, err := ci.Whoami(ctx)
		require.NoError(t, err)
		assert.Equal(t, "ci", who.Principal)

		ex, err := ci.Apply(ctx, web.ID, pkg("web"), client.ApplyOptions{Wait: true})
		require.NoError(t, err)
		mustStatus(t, ex, model.ExecCompleted)

		_, err = ci.Apply(ctx, db.ID, pkg("db"), client.ApplyOptions{Wait: true})
		require.Equal(t, http.StatusForbidden, apiStatus(err), "apply db: %v", err)
		var ae *client.APIError
		require.ErrorAs(t, err, &ae)
		assert.Contains(t, ae.Message, "deployer")
		assert.Contains(t, ae.Message, db.ID)

		// The stack's resources would run on cluster prod's nodes: the
		// role must hold there too.
		_, err = ci.Apply(ctx, web.ID, pkg("web"), client.ApplyOptions{Wait: true, Cluster: "prod"})
		require.Equal(t, http.StatusForbidden, apiStatus(err), "apply web onto prod: %v", err)
		require.ErrorAs(t, err, &ae)
		assert.Contains(t, ae.Message, `cluster "prod"`)

		_, err = ci.PutGraph(ctx, model.LayerCluster, "prod", "deploy", client.Document{Format: "yaml", Data: []byte("tasks: []\n")})
		require.Equal(t, http.StatusForbidden, apiStatus(err), "upload a graph: %v", err)

		_, err = ci.Approve(ctx, ex.ID, "")
		require.Equal(t, http.StatusForbidden, apiStatus(err), "approve: %v", err)

		// A viewer scoped by label sees web only.
		_, err = admin.CreatePrincipal(ctx, model.PrincipalInput{Name: "dev"})
		require.NoError(t, err)
		viewTok, err := admin.CreateToken(ctx, model.TokenInput{Principal: "dev", Roles: []model.Grant{{Role: model.RoleViewer, Selector: "env=prod"}}})
		require.NoError(t, err)
		viewer, err := client.New(h.url, viewTok.Token)
		require.NoError(t, err)
		stacks, err := viewer.ListStacks(ctx)
		require.NoError(t, err)
		require.Len(t, stacks, 1)
		assert.Equal(t, web.ID, stacks[0].ID)
		_, err = viewer.GetStack(ctx, db.ID)
		require.Equal(t, http.StatusForbidden, apiStatus(err))
		_, err = viewer.Apply(ctx, web.ID, pkg("web"), client.ApplyOptions{})
		require.Equal(t, http.StatusForbidden, apiStatus(err), "a viewer may not apply")

		// Once an admin applied web onto prod, web's resources are on prod's
		// nodes: destroying web needs deployer on prod too.
		onProd, err := admin.Apply(ctx, web.ID, pkg("web"), client.ApplyOptions{Wait: true, Cluster: "prod"})
		require.NoError(t, err)
		mustStatus(t, onProd, model.ExecCompleted)
		_, err = ci.DeleteStack(ctx, web.ID, client.DeleteOptions{})
		require.Equal(t, http.StatusForbidden, apiStatus(err), "destroy web on prod: %v", err)
		require.ErrorAs(t, err, &ae)
		assert.Contains(t, ae.Message, `cluster "prod"`)

		// Labels move a resource into or out of a selector's scope.
		_, err = admin.SetLabels(ctx, "stacks", db.ID, map[string]string{"env": "prod"})
		require.NoError(t, err)
		stacks, err = viewer.ListStacks(ctx)
		require.NoError(t, err)
		assert.Len(t, stacks, 2, "db now carries env=prod")
		_, err = admin.SetLabels(ctx, "stacks", db.ID, nil)
		require.NoError(t, err)
		_, err = viewer.GetStack(ctx, db.ID)
		require.Equal(t, http.StatusForbidden, apiStatus(err))
		_, err = viewer.SetLabels(ctx, "stacks", web.ID, nil)
		require.Equal(t, http.StatusForbidden, apiStatus(err), "labels are admin's")

		// Revoked: refused at once.
		require.NoError(t, admin.RevokeToken(ctx, ciTok.ID))
		_, err = ci.ListStacks(ctx)
		require.Equal(t, http.StatusUnauthorized, apiStatus(err))

		wantTrail := func(t *testing.T, c *client.Client) {
			t.Helper()
			trail, err := c.Audit(ctx, model.AuditFilter{Limit: 1000})
			require.NoError(t, err)
			has := func(principal, method, route, stack string, status int) bool {
				for _, e := range trail.Entries {
					if e.Principal == principal && e.Method == method && e.Route == route && e.Status == status && (stack == "" || e.Stack == stack) {
						return true
					}
				}
				return false
			}
			assert.True(t, has("ci", "POST", "/v1/stacks/:id/apply", web.ID, http.StatusOK), "the apply of web")
			assert.True(t, has("ci", "POST", "/v1/stacks/:id/apply", db.ID, http.StatusForbidden), "the refused apply of db")
			assert.True(t, has("ci", "POST", "/v1/stacks/:id/apply", web.ID, http.StatusForbidden), "the refused apply onto prod")
			assert.True(t, has("ci", "PUT", "/v1/clusters/:id/graphs/:type", "", http.StatusForbidden), "the refused graph")
			assert.True(t, has("ci", "POST", "/v1/executions/:id/approve", web.ID, http.StatusForbidden), "the refused approval")
			assert.True(t, has("dev", "GET", "/v1/stacks/:id", db.ID, http.StatusForbidden), "the refused read")
			assert.True(t, has("", "DELETE", "/v1/tokens/:id", "", http.StatusNoContent), "the revocation")
			assert.True(t, has("", "GET", "/v1/stacks", "", http.StatusUnauthorized), "the revoked token's attempt")
			for _, e := range trail.Entries {
				assert.NotEmpty(t, e.RequestID)
				if e.Status >= 400 {
					assert.NotEmpty(t, e.Code)
				}
			}
			// Filters: the CI's entries only.
			mine, err := c.Audit(ctx, model.AuditFilter{Principal: "ci", Stack: db.ID})
			require.NoError(t, err)
			require.Len(t, mine.Entries, 1)
			assert.Equal(t, http.StatusForbidden, mine.Entries[0].Status)
		}
		wantTrail(t, admin)

		// A viewer reads the entries of what it may view only.
		vtrail, err := viewer.Audit(ctx, model.AuditFilter{Limit: 1000})
		require.NoError(t, err)
		for _, e := range vtrail.Entries {
			assert.True(t, e.Stack == web.ID || e.Principal == "dev", "viewer sees %+v", e)
		}

		// A new server on the same store has the trail.
		e2, err := New(Config{Token: h.token}, Deps{Store: h.store})
		require.NoError(t, err)
		srv := httptest.NewServer(e2)
		t.Cleanup(srv.Close)
		again, err := client.New(srv.URL, h.token)
		require.NoError(t, err)
		wantTrail(t, again)
		// And the viewer's token works there.
		viewer2, err := client.New(srv.URL, viewTok.Token)
		require.NoError(t, err)
		stacks, err = viewer2.ListStacks(ctx)
		require.NoError(t, err)
		require.Len(t, stacks, 1)
	})
}

// A principal cannot take the name of a token of CAIRN_API_TOKENS: the
// name alone is what approvals and the audit trail record.
func TestPrincipalNameOfANamedToken(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withConfig(func(c *Config) { c.Tokens = map[string]string{"alice": "alice-t0ken"} }))
	s.Token = "alice-t0ken"
	s.do(http.MethodPost, "/v1/principals", model.PrincipalInput{Name: "alice"}).expect(t, http.StatusConflict)
	s.do(http.MethodPost, "/v1/principals", model.PrincipalInput{Name: "bob"}).expect(t, http.StatusCreated)
}
