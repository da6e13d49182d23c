package store

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestTeamsStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		url := be.fresh(t)
		s := openTest(t, url)

		p := &model.Principal{Name: "ci", Kind: model.PrincipalService}
		must(t, s.CreatePrincipal(ctx, p))
		require.NotEmpty(t, p.ID)
		wantErr(t, s.CreatePrincipal(ctx, &model.Principal{Name: "ci", Kind: model.PrincipalUser}), ErrConflict, "ci")
		byName, err := s.GetPrincipal(ctx, "ci")
		must(t, err)
		assert.Equal(t, p.ID, byName.ID)

		exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		tok := &model.Token{ID: "0123456789abcdef", PrincipalID: p.ID, Prefix: "cairn_0123456789abcdef_abcd",
			Roles: []model.Grant{{Role: model.RoleDeployer, Stacks: []string{"web"}, Selector: "env=prod"}}, ExpiresAt: &exp}
		hash := sha256.Sum256([]byte("secret"))
		must(t, s.CreateToken(ctx, tok, hash[:]))
		got, gotHash, disabled, err := s.TokenByID(ctx, tok.ID)
		must(t, err)
		assert.Equal(t, hash[:], gotHash)
		assert.False(t, disabled)
		assert.Equal(t, "ci", got.Principal)
		assert.Equal(t, tok.Roles, got.Roles)
		require.NotNil(t, got.ExpiresAt)
		assert.True(t, exp.Equal(*got.ExpiresAt))
		assert.Nil(t, got.LastUsed)

		used := time.Now().UTC()
		must(t, s.TouchToken(ctx, tok.ID, used))
		list, err := s.ListTokens(ctx)
		must(t, err)
		require.Len(t, list, 1)
		require.NotNil(t, list[0].LastUsed)
		assert.WithinDuration(t, used, *list[0].LastUsed, time.Millisecond)

		// Labels.
		must(t, s.SetLabels(ctx, model.ScopeStack, "web", map[string]string{"env": "prod"}))
		must(t, s.SetLabels(ctx, model.ScopeCluster, "web", map[string]string{"env": "dev"}))
		l, err := s.Labels(ctx, model.ScopeStack, "web")
		must(t, err)
		assert.Equal(t, map[string]string{"env": "prod"}, l)
		all, err := s.AllLabels(ctx, model.ScopeCluster)
		must(t, err)
		assert.Equal(t, map[string]map[string]string{"web": {"env": "dev"}}, all)
		must(t, s.SetLabels(ctx, model.ScopeStack, "web", nil))
		l, err = s.Labels(ctx, model.ScopeStack, "web")
		must(t, err)
		assert.Nil(t, l)

		// Deleting the principal deletes its tokens.
		must(t, s.DeletePrincipal(ctx, p.ID))
		_, _, _, err = s.TokenByID(ctx, tok.ID)
		wantErr(t, err, ErrNotFound, tok.ID)
		wantErr(t, s.DeletePrincipal(ctx, p.ID), ErrNotFound, p.ID)
	})
}

func TestAuditStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		url := be.fresh(t)
		s := openTest(t, url)
		old := time.Now().Add(-48 * time.Hour).UTC()
		entries := []model.AuditEntry{
			{At: old, Principal: "ci", Method: "POST", Route: "/v1/stacks/:id/apply", Path: "/v1/stacks/web/apply", Stack: "web", Status: 202, RequestID: "r1"},
			{Principal: "ci", Method: "POST", Route: "/v1/stacks/:id/apply", Path: "/v1/stacks/db/apply", Stack: "db", Status: 403, Code: "forbidden", RequestID: "r2"},
			{Principal: "ops", Method: "POST", Route: "/v1/executions/:id/approve", Path: "/v1/executions/x/approve", Execution: "x", Stack: "web", Status: 200, RequestID: "r3"},
		}
		must(t, s.AppendAudit(ctx, entries))

		// A second store on the same database (a restart) reads them.
		s2 := openTest(t, url)
		got, err := s2.ListAudit(ctx, model.AuditFilter{})
		must(t, err)
		require.Len(t, got, 3)
		assert.Equal(t, []string{"r3", "r2", "r1"}, []string{got[0].RequestID, got[1].RequestID, got[2].RequestID}, "newest first")
		assert.Equal(t, "forbidden", got[1].Code)

		for _, tc := range []struct {
			name string
			f    model.AuditFilter
			want []string
		}{
			{"principal", model.AuditFilter{Principal: "ci"}, []string{"r2", "r1"}},
			{"stack", model.AuditFilter{Stack: "web"}, []string{"r3", "r1"}},
			{"execution", model.AuditFilter{Execution: "x"}, []string{"r3"}},
			{"since", model.AuditFilter{Since: time.Now().Add(-time.Hour)}, []string{"r3", "r2"}},
			{"page", model.AuditFilter{Limit: 1, Before: got[0].ID}, []string{"r2"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				page, err := s2.ListAudit(ctx, tc.f)
				must(t, err)
				var ids []string
				for _, e := range page {
					ids = append(ids, e.RequestID)
				}
				assert.Equal(t, tc.want, ids)
			})
		}

		n, err := s2.PruneAudit(ctx, time.Now().Add(-24*time.Hour))
		must(t, err)
		assert.Equal(t, 1, n)
		got, err = s2.ListAudit(ctx, model.AuditFilter{})
		must(t, err)
		assert.Len(t, got, 2)
	})
}
