package retention_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/retention"
	"github.com/cairn-io/cairn/store"
)

// The sweeper prunes audit entries older than the audit retention and
// keeps the rest; the default keeps a year.
func TestSweeperPrunesAudit(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	now := time.Now().UTC()
	require.NoError(t, st.AppendAudit(ctx, []model.AuditEntry{
		{At: now.Add(-400 * 24 * time.Hour), Method: "POST", Route: "/v1/stacks", Path: "/v1/stacks", Status: 201, RequestID: "ancient"},
		{At: now.Add(-3 * 24 * time.Hour), Method: "POST", Route: "/v1/stacks", Path: "/v1/stacks", Status: 201, RequestID: "old"},
		{At: now, Method: "POST", Route: "/v1/stacks", Path: "/v1/stacks", Status: 201, RequestID: "new"},
	}))
	ids := func() []string {
		list, err := st.ListAudit(ctx, model.AuditFilter{})
		require.NoError(t, err)
		var out []string
		for _, e := range list {
			out = append(out, e.RequestID)
		}
		return out
	}

	n, err := retention.New(st, nil, 0, nil).PruneAudit(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the default keeps a year")
	require.Equal(t, []string{"new", "old"}, ids())

	n, err = retention.New(st, nil, 0, nil).WithAudit(24 * time.Hour).PruneAudit(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"new"}, ids())
}
