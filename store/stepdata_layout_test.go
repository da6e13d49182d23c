package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepDataMigratesToARowidTable writes step data into the layout of
// migrations 1 to 13 (a WITHOUT ROWID table), opens the store again and
// finds every row, now in a rowid table whose key index holds no blob.
func TestStepDataMigratesToARowidTable(t *testing.T) {
	ctx := context.Background()
	be := testBackends[0]
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "cairn.db")
	s, err := Open(ctx, dbURL)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	raw := be.raw(t, dbURL)
	big := bytes.Repeat([]byte("i"), 1<<20)
	for _, q := range []string{
		`DROP TABLE step_data`,
		`CREATE TABLE step_data (exec_id TEXT NOT NULL, kind TEXT NOT NULL, step_id TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (exec_id, kind, step_id)) WITHOUT ROWID`,
		`DELETE FROM schema_migrations WHERE version = 14`,
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	_, err = raw.Exec(`INSERT INTO step_data VALUES ('e1', 'index', '', ?), ('e1', 'outputs', 'a', 'out-a'), ('e2', 'before', 'b', 'before-b')`, big)
	require.NoError(t, err)
	require.Equal(t, 1, withoutRowid(t, raw), "the old layout was not set up")
	require.NoError(t, raw.Close())

	s, err = Open(ctx, dbURL)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	require.Equal(t, 0, withoutRowid(t, be.raw(t, dbURL)), "step_data is still a WITHOUT ROWID table")
	for _, tt := range []struct {
		exec, kind, step string
		want             []byte
	}{
		{"e1", "index", "", big},
		{"e1", "outputs", "a", []byte("out-a")},
		{"e2", "before", "b", []byte("before-b")},
	} {
		got, err := s.GetStepData(ctx, tt.exec, tt.step, tt.kind)
		require.NoError(t, err, "%s %s %s", tt.exec, tt.kind, tt.step)
		require.Equal(t, tt.want, got, "%s %s %s after the migration", tt.exec, tt.kind, tt.step)
	}
	// The upsert still finds its row by the key.
	require.NoError(t, s.PutStepDataBatch(ctx, "e1", "outputs", map[string][]byte{"a": []byte("again"), "c": []byte("new")}))
	got, err := s.GetStepData(ctx, "e1", "a", "outputs")
	require.NoError(t, err)
	require.Equal(t, []byte("again"), got)
}

// withoutRowid reads step_data's WITHOUT ROWID flag from SQLite's own
// table list.
func withoutRowid(t *testing.T, db *sql.DB) int {
	t.Helper()
	var wr int
	require.NoError(t, db.QueryRow(`SELECT wr FROM pragma_table_list WHERE name = 'step_data'`).Scan(&wr))
	return wr
}

// BenchmarkPutStepDataBesideLargeRows writes the records of 1,000 steps
// into an execution that also keeps a step index of 8 MiB and 300 unit
// pages of 40 KiB, as an apply of 100,000 files does.
func BenchmarkPutStepDataBesideLargeRows(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite://"+filepath.Join(b.TempDir(), "cairn.db"))
	require.NoError(b, err)
	defer s.Close()
	require.NoError(b, s.PutStepData(ctx, "e", "", "index", bytes.Repeat([]byte("i"), 8<<20)))
	units := map[string][]byte{}
	for i := range 300 {
		units[fmt.Sprintf("u%04d", i)] = bytes.Repeat([]byte("u"), 40<<10)
	}
	require.NoError(b, s.PutStepDataBatch(ctx, "e", "unit", units))
	out := bytes.Repeat([]byte("o"), 320)
	b.ResetTimer()
	for n := range b.N {
		batch := make(map[string][]byte, 1000)
		for i := range 1000 {
			batch[fmt.Sprintf("s%d-%06d", n, i)] = out
		}
		require.NoError(b, s.PutStepDataBatch(ctx, "e", "outputs", batch))
	}
}
