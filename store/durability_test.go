package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every SQLite connection of the store, the writer's and the readers',
// runs with synchronous=FULL (2): a commit that returned survives a power
// loss, so a before-state or an outcome a retry relies on is never lost.
func TestSQLiteCommitsAreDurable(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	s := st.(*sqlStore)
	var w, r int
	require.NoError(t, s.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&w))
	require.NoError(t, s.r.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&r))
	require.Equal(t, 2, w, "writer: synchronous=FULL")
	require.Equal(t, 2, r, "readers: synchronous=FULL")
}
