package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver
)

// DefaultFile is the SQLite file name DefaultURL puts under the data folder.
const DefaultFile = "cairn.db"

// DefaultDataDir is where Open keeps the SQLite file when given no URL.
const DefaultDataDir = ".data"

// sqliteBusyTimeout is how long a SQLite connection waits for another
// process's write lock before giving up with SQLITE_BUSY.
const sqliteBusyTimeout = 30 * time.Second

// DefaultURL returns the URL of the SQLite file Cairn keeps under dataDir.
func DefaultURL(dataDir string) string {
	return "sqlite://" + filepath.Join(dataDir, DefaultFile)
}

// Open connects to the database the URL names and brings its schema up to
// date. "postgres://…" and "postgresql://…" select PostgreSQL; "sqlite://PATH"
// or a plain file path select SQLite (the file and its folder are created);
// "" means DefaultURL(DefaultDataDir).
func Open(ctx context.Context, dbURL string) (Store, error) {
	switch {
	case strings.HasPrefix(dbURL, "postgres://"), strings.HasPrefix(dbURL, "postgresql://"):
		return openPostgres(ctx, dbURL)
	case dbURL == "":
		return openSQLite(ctx, filepath.Join(DefaultDataDir, DefaultFile))
	case strings.HasPrefix(dbURL, "sqlite://"):
		return openSQLite(ctx, strings.TrimPrefix(dbURL, "sqlite://"))
	case strings.HasPrefix(dbURL, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(dbURL, "sqlite:"))
	case strings.Contains(dbURL, "://"):
		scheme, _, _ := strings.Cut(dbURL, "://")
		return nil, fmt.Errorf("open store: unsupported database URL scheme %q (want sqlite:// or postgres://)", scheme)
	default:
		return openSQLite(ctx, dbURL)
	}
}

func openSQLite(ctx context.Context, path string) (Store, error) {
	switch {
	case path == "":
		return nil, errors.New("open store: empty SQLite path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return nil, fmt.Errorf("open store: SQLite path %q: use a file path (in-memory and URI names are not supported)", path)
	case strings.ContainsAny(path, "?#"):
		return nil, fmt.Errorf("open store: SQLite path %q: '?' and '#' are not allowed in the file name", path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	// Create the file owner-only before SQLite does: it may hold secrets.
	// SQLite gives its -wal and -shm files the same permissions.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	_ = f.Close()

	// Opening races other processes opening the same file: switching to
	// WAL and the first migration take locks that busy_timeout does not
	// always cover, so a busy open is retried for a bounded time.
	deadline := time.Now().Add(sqliteBusyTimeout)
	for {
		s, err := openSQLiteOnce(ctx, path)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// isBusy reports SQLite's lock errors.
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

func openSQLiteOnce(ctx context.Context, path string) (Store, error) {
	params := url.Values{}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	params.Add("_pragma", "foreign_keys(1)")
	// FULL: a commit is on disk when it returns (WAL fsynced per commit).
	// NORMAL would let the last commits vanish with the machine's power,
	// and with them a before-state or an outcome a retry relies on: an
	// effect made twice or a change without its undo.
	params.Add("_pragma", "synchronous(FULL)")
	// The writer runs every transaction as BEGIN IMMEDIATE, so a
	// transaction that reads before it writes never has to upgrade its lock
	// (the upgrade is what fails with SQLITE_BUSY regardless of the timeout).
	wparams := url.Values{}
	for k, v := range params {
		wparams[k] = append([]string(nil), v...)
	}
	wparams.Add("_pragma", "journal_mode(WAL)")
	// 8 MiB of pages: a transaction larger than that spills its pages to
	// the WAL before it commits, which costs writes but no fsync. A cache
	// of 32 MiB made no apply of 100,000 files faster and was 40 MiB more
	// of the server's memory, outside the Go limit (CAIRN_MEMORY_LIMIT).
	wparams.Add("_pragma", "cache_size(-8192)")
	wparams.Set("_txlock", "immediate")

	w, err := sql.Open("sqlite", path+"?"+wparams.Encode())
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// One writer connection: writers queue in the pool instead of
	// contending for SQLite's lock; other processes wait on busy_timeout.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	s := &sqlStore{d: sqliteDialect, w: w, r: w, group: &groupCommit{db: w}}
	if err := s.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	// Readers run beside the writer (WAL lets them), read-only by pragma.
	params.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	if err := r.PingContext(ctx); err != nil {
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.r = r
	return s, nil
}

func openPostgres(ctx context.Context, dbURL string) (Store, error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", redactURL(dbURL), err)
	}
	s := &sqlStore{d: postgresDialect, w: db, r: db}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", redactURL(dbURL), err)
	}
	return s, nil
}

// redactURL drops the password from a database URL for error messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}
