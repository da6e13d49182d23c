package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestDefaultURL(t *testing.T) {
	got, want := DefaultURL("/var/lib/cairn"), "sqlite:///var/lib/cairn/cairn.db"
	require.Equal(t, want, got, "DefaultURL")
}

func TestOpenSQLiteURLs(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		url  string
		file string // the file that must exist afterwards
	}{
		{"sqlite scheme absolute", "sqlite://" + filepath.Join(dir, "a", "one.db"), filepath.Join(dir, "a", "one.db")},
		{"sqlite scheme without slashes", "sqlite:" + filepath.Join(dir, "two.db"), filepath.Join(dir, "two.db")},
		{"plain path in new folders", filepath.Join(dir, "b", "c", "three.db"), filepath.Join(dir, "b", "c", "three.db")},
		{"DefaultURL", DefaultURL(filepath.Join(dir, "data")), filepath.Join(dir, "data", DefaultFile)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, tt.url)
			must(t, s.Ping(context.Background()))
			st := newTestStack("on disk")
			must(t, s.CreateStack(context.Background(), st))
			info, err := os.Stat(tt.file)
			require.NoError(t, err, "database file")
			perm := info.Mode().Perm()
			require.Equal(t, fs.FileMode(0o600), perm, "database file mode %o, want 600 (it may hold secrets)", perm)
			info, err = os.Stat(tt.file + "-wal")
			require.NoError(t, err, "write-ahead log")
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "write-ahead log mode")
			// The same file through DefaultURL's form sees the same data.
			other := openTest(t, "sqlite://"+tt.file)
			_, err = other.GetStack(context.Background(), st.ID)
			require.NoError(t, err, "second store on %s: %v", tt.file, err)
		})
	}
}

func TestOpenEmptyURLUsesDataDir(t *testing.T) {
	t.Chdir(t.TempDir())
	s := openTest(t, "")
	must(t, s.CreateStack(context.Background(), newTestStack("default")))
	_, err := os.Stat(filepath.Join(DefaultDataDir, DefaultFile))
	require.NoError(t, err, "Open(\"\") did not use %s: %v", filepath.Join(DefaultDataDir, DefaultFile), err)
}

func TestOpenRejectsBadURLs(t *testing.T) {
	tests := []struct {
		url  string
		want string
	}{
		{"mysql://localhost/cairn", `unsupported database URL scheme "mysql"`},
		{"sqlite://:memory:", "use a file path"},
		{"sqlite://", "empty SQLite path"},
		{filepath.Join(t.TempDir(), "what?.db"), "not allowed in the file name"},
		{"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", "open store postgres://nobody@127.0.0.1:1/none"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			s, err := Open(context.Background(), tt.url)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) succeeded", tt.url)
			}
			require.Contains(t, err.Error(), tt.want, "Open(%q) error %q, want it to contain %q", tt.url, err, tt.want)
		})
	}
}

func TestOpenRedactsPassword(t *testing.T) {
	_, err := Open(context.Background(), "postgres://cairn:hunter2@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	require.Error(t, err, "Open of an unreachable server succeeded")
	require.NotContains(t, err.Error(), "hunter2", "error leaks the password: %v", err)
}

func TestMigrationFoldersAgree(t *testing.T) {
	versions := func(d dialect) []string {
		ms, err := migrations(d)
		must(t, err)
		var out []string
		for _, m := range ms {
			out = append(out, m.name)
		}
		return out
	}
	sq, pg := versions(sqliteDialect), versions(postgresDialect)
	require.NotEmpty(t, sq, "migrations differ between dialects: sqlite %v, postgres %v", sq, pg)
	require.Equal(t, pg, sq, "migrations differ between dialects: sqlite %v, postgres %v", sq, pg)
}

// appliedMigrations reads schema_migrations behind the store.
func appliedMigrations(t *testing.T, be testBackend, dbURL string) []int {
	t.Helper()
	rows, err := be.raw(t, dbURL).Query(`SELECT version FROM schema_migrations ORDER BY version`)
	must(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		must(t, rows.Scan(&v))
		out = append(out, v)
	}
	must(t, rows.Err())
	return out
}

func wantVersions(t *testing.T) []int {
	ms, err := migrations(sqliteDialect)
	must(t, err)
	var out []int
	for _, m := range ms {
		out = append(out, m.version)
	}
	return out
}

func TestMigrationsIdempotentOnReopen(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		s, err := Open(ctx, dbURL)
		must(t, err)
		st := newTestStack("kept")
		must(t, s.CreateStack(ctx, st))
		must(t, s.Close())

		for i := range 3 {
			s, err := Open(ctx, dbURL)
			require.NoError(t, err, "reopen %d: %v", i, err)
			_, err = s.GetStack(ctx, st.ID)
			require.NoError(t, err, "reopen %d lost data: %v", i, err)
			must(t, s.Close())
		}
		got, want := appliedMigrations(t, be, dbURL), wantVersions(t)
		require.Equal(t, want, got, "schema_migrations")
	})
}

func TestMigrationsConcurrentOpen(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		const openers = 8
		var wg sync.WaitGroup
		errs := make([]error, openers)
		for i := range openers {
			wg.Go(func() {
				s, err := Open(ctx, dbURL)
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = s.PutStepData(ctx, "open", strconv.Itoa(i), "before", []byte("x"))
				_ = s.Close()
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "opener %d: %v", i, err)
		}
		got, want := appliedMigrations(t, be, dbURL), wantVersions(t)
		require.Equal(t, want, got, "schema_migrations")
		s := openTest(t, dbURL)
		all, err := s.ListStepData(ctx, "open", "before")
		must(t, err)
		require.Len(t, all, openers, "%d openers wrote %d rows", openers, len(all))
	})
}

const helperOpenEnv = "CAIRN_STORE_TEST_HELPER_URL"

// helperOpen runs in a child process: open the store (migrating if first),
// write rows one by one and in a batch, and report failure by exit code.
func helperOpen(dbURL string) int {
	ctx := context.Background()
	s, err := Open(ctx, dbURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	execID := "proc-" + strconv.Itoa(os.Getpid())
	for i := range 50 {
		if err := s.PutStepData(ctx, execID, strconv.Itoa(i), "before", []byte("one")); err != nil {
			fmt.Fprintln(os.Stderr, "put:", err)
			return 1
		}
	}
	batch := map[string][]byte{}
	for i := range 500 {
		batch["b"+strconv.Itoa(i)] = []byte("batched")
	}
	if err := s.PutStepDataBatch(ctx, execID, "before", batch); err != nil {
		fmt.Fprintln(os.Stderr, "batch:", err)
		return 1
	}
	return 0
}

// TestMigrationsConcurrentProcesses starts several processes that open one
// fresh database at the same moment and then write to it, as a server and
// its workers starting together would.
func TestMigrationsConcurrentProcesses(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		dbURL := be.fresh(t)
		const procs = 4
		cmds := make([]*exec.Cmd, procs)
		outs := make([]strings.Builder, procs)
		for i := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperOpenEnv+"="+dbURL)
			cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
			cmds[i] = cmd
		}
		for _, cmd := range cmds {
			must(t, cmd.Start())
		}
		for i, cmd := range cmds {
			err := cmd.Wait()
			assert.NoError(t, err, "process %d: %v\n%s", i, err, outs[i].String())
		}
		if t.Failed() {
			return
		}
		got, want := appliedMigrations(t, be, dbURL), wantVersions(t)
		require.Equal(t, want, got, "schema_migrations")
		var rows int
		must(t, be.raw(t, dbURL).QueryRow(`SELECT count(*) FROM step_data`).Scan(&rows))
		require.Equal(t, procs*550, rows, "%d processes wrote %d rows, want %d", procs, rows, procs*550)
	})
}

func TestPing(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		s, err := Open(context.Background(), be.fresh(t))
		must(t, err)
		must(t, s.Ping(context.Background()))
		must(t, s.Close())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.Error(t, s.Ping(ctx), "Ping after Close succeeded")
	})
}

func TestClosedStoreReturnsErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		s, err := Open(context.Background(), be.fresh(t))
		must(t, err)
		must(t, s.Close())
		ctx := context.Background()
		calls := map[string]func() error{
			"CreateStack": func() error { return s.CreateStack(ctx, newTestStack("x")) },
			"GetStack":    func() error { _, err := s.GetStack(ctx, "x"); return err },
			"ListStacks":  func() error { _, err := s.ListStacks(ctx); return err },
			"DeleteStack": func() error { return s.DeleteStack(ctx, "x") },
			"WriteStackRecord": func() error {
				_, err := s.WriteStackRecord(ctx, "x", "e", nil, "", "", true)
				return err
			},
			"PutSnapshot":      func() error { _, err := s.PutSnapshot(ctx, "package", []byte("x")); return err },
			"GetSnapshot":      func() error { _, err := s.GetSnapshot(ctx, "x"); return err },
			"PutStepData":      func() error { return s.PutStepData(ctx, "e", "s", "before", nil) },
			"GetStepData":      func() error { _, err := s.GetStepData(ctx, "e", "s", "before"); return err },
			"ListStepData":     func() error { _, err := s.ListStepData(ctx, "e", "before"); return err },
			"PutStepDataBatch": func() error { return s.PutStepDataBatch(ctx, "e", "before", map[string][]byte{"s": nil}) },
			"DeleteStepData":   func() error { return s.DeleteStepData(ctx, "e") },
			"PutRelease":       func() error { return s.PutRelease(ctx, &model.Release{}) },
			"GetRelease":       func() error { _, err := s.GetRelease(ctx, "x"); return err },
			"ListReleases":     func() error { _, err := s.ListReleases(ctx); return err },
			"DeleteRelease":    func() error { return s.DeleteRelease(ctx, "x") },
			"PutPlugin":        func() error { return s.PutPlugin(ctx, &model.Plugin{}) },
			"GetPlugin":        func() error { _, err := s.GetPlugin(ctx, "x"); return err },
			"ListPlugins":      func() error { _, err := s.ListPlugins(ctx); return err },
			"DeletePlugin":     func() error { return s.DeletePlugin(ctx, "x") },
			"PutCluster":       func() error { return s.PutCluster(ctx, &model.Cluster{}) },
			"GetCluster":       func() error { _, err := s.GetCluster(ctx, "x"); return err },
			"ListClusters":     func() error { _, err := s.ListClusters(ctx); return err },
			"DeleteCluster":    func() error { return s.DeleteCluster(ctx, "x") },
			"PutGraph": func() error {
				return s.PutGraph(ctx, &model.StoredGraph{Layer: model.LayerCluster, OwnerID: "x"})
			},
			"GetGraph":      func() error { _, err := s.GetGraph(ctx, model.LayerCluster, "x", ""); return err },
			"ListGraphs":    func() error { _, err := s.ListGraphs(ctx, model.LayerCluster, "x"); return err },
			"DeleteGraph":   func() error { return s.DeleteGraph(ctx, model.LayerCluster, "x", "") },
			"RecordTaskRun": func() error { return s.RecordTaskRun(ctx, model.TaskRun{ClusterID: "x"}) },
			"LastTaskRun":   func() error { _, err := s.LastTaskRun(ctx, "x", "n", "t"); return err },
		}
		for name, call := range calls {
			err := call()
			if !assert.Error(t, err, "%s on a closed store succeeded", name) {
				continue
			}
			require.NotErrorIs(t, err, ErrNotFound, "%s on a closed store: %v, want a database error, not a record error", name, err)
			assert.NotErrorIs(t, err, ErrConflict, "%s on a closed store: %v, want a database error, not a record error", name, err)
		}
	})
}
