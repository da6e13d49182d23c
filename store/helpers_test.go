package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

// testBackend is one database the suite runs against.
type testBackend struct {
	name string
	// fresh returns the URL of a new, empty database of this backend, removed
	// when the test ends.
	fresh func(t testing.TB) string
	// raw opens the database behind url without the store, to look at the
	// bytes it keeps.
	raw func(t testing.TB, dbURL string) *sql.DB
}

var testBackends = []testBackend{
	{
		name: "sqlite",
		fresh: func(t testing.TB) string {
			return "sqlite://" + filepath.Join(t.TempDir(), "cairn.db")
		},
		raw: func(t testing.TB, dbURL string) *sql.DB {
			db, err := sql.Open("sqlite", strings.TrimPrefix(dbURL, "sqlite://"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = db.Close() })
			return db
		},
	},
	{
		name:  "postgres",
		fresh: testenv.FreshPostgres,
		raw: func(t testing.TB, dbURL string) *sql.DB {
			db, err := sql.Open("pgx", dbURL)
			require.NoError(t, err)
			t.Cleanup(func() { _ = db.Close() })
			return db
		},
	},
}

// eachBackend runs fn as a subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, be testBackend)) {
	t.Helper()
	for _, be := range testBackends {
		t.Run(be.name, func(t *testing.T) { fn(t, be) })
	}
}

// openTest opens the store at dbURL and closes it when the test ends.
func openTest(t testing.TB, dbURL string) Store {
	t.Helper()
	s, err := Open(context.Background(), dbURL)
	require.NoError(t, err, "open %s: %v", dbURL, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// freshStore opens a store on a new database of the backend.
func freshStore(t testing.TB, be testBackend) Store {
	t.Helper()
	return openTest(t, be.fresh(t))
}

func must(t testing.TB, err error) {
	t.Helper()
	require.NoError(t, err)
}

// wantErr checks that err wraps target and its message names every part.
func wantErr(t testing.TB, err, target error, parts ...string) {
	t.Helper()
	require.ErrorIs(t, err, target, "error = %v, want one wrapping %v", err, target)
	for _, p := range parts {
		require.Contains(t, err.Error(), p, "error %q does not name %q", err, p)
	}
}

func TestMain(m *testing.M) {
	// The concurrent-open test starts copies of this binary as separate
	// processes; in such a copy the variable names the database to open.
	if u := os.Getenv(helperOpenEnv); u != "" {
		os.Exit(helperOpen(u))
	}
	os.Exit(m.Run())
}
