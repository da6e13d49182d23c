package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// BenchmarkTeamsRequest measures a request's cost through authentication,
// authorization and the audit trail over real HTTP on SQLite: a read with
// the environment's token, the same read with a store token (its record
// cached), a scoped read that checks a label selector (one label read),
// and an audited change refused by validation (one audit entry queued and
// written in a batch).
func BenchmarkTeamsRequest(b *testing.B) {
	s := newTestServer(b, sqliteURL(b), withToken("adm"))
	c, err := client.New(s.URL, "adm")
	require.NoError(b, err)
	ctx := context.Background()
	st, err := c.CreateStack(ctx, model.StackInput{Name: "web", Labels: map[string]string{"env": "prod"}})
	require.NoError(b, err)
	_, err = c.CreatePrincipal(ctx, model.PrincipalInput{Name: "bench"})
	require.NoError(b, err)
	mk := func(g model.Grant) string {
		tk, err := c.CreateToken(ctx, model.TokenInput{Principal: "bench", Roles: []model.Grant{g}})
		require.NoError(b, err)
		return tk.Token
	}
	store, selector := mk(model.Grant{Role: model.RoleAdmin}), mk(model.Grant{Role: model.RoleViewer, Selector: "env=prod"})
	do := func(b *testing.B, token, method, path, body string, want int) {
		for b.Loop() {
			var rd *strings.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, _ := http.NewRequest(method, s.URL+path, nil)
			if rd != nil {
				req, _ = http.NewRequest(method, s.URL+path, rd)
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				b.Fatalf("status %d, want %d", resp.StatusCode, want)
			}
		}
	}
	b.Run("env-token-read", func(b *testing.B) { do(b, "adm", http.MethodGet, "/v1/stacks/"+st.ID, "", 200) })
	b.Run("store-token-read", func(b *testing.B) { do(b, store, http.MethodGet, "/v1/stacks/"+st.ID, "", 200) })
	b.Run("selector-read", func(b *testing.B) { do(b, selector, http.MethodGet, "/v1/stacks/"+st.ID, "", 200) })
	b.Run("audited-change", func(b *testing.B) { do(b, store, http.MethodPost, "/v1/principals", `{"name": ""}`, 422) })
}
