package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// sqlStore implements Store over database/sql for both dialects.
type sqlStore struct {
	d dialect
	// w runs every write. For SQLite it is a single connection, so writers
	// of this process queue instead of fighting over the file lock.
	w *sql.DB
	// r runs reads; for PostgreSQL it is the same pool as w.
	r *sql.DB
	// group, for SQLite, commits the write transactions that arrive
	// together at once (groupCommit).
	group *groupCommit

	// noncesSince and noncesFresh are StartNoncesSince's answer, which
	// never changes once read.
	noncesMu    sync.Mutex
	noncesSince time.Time
	noncesFresh bool
}

var _ Store = (*sqlStore)(nil)

func (s *sqlStore) Close() error {
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}

func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", s.d.name, err)
	}
	if s.r != s.w {
		if err := s.r.PingContext(ctx); err != nil {
			return fmt.Errorf("ping %s: %w", s.d.name, err)
		}
	}
	return nil
}

// newID returns a random URL-safe id of 16 hex characters.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// queryer is what both *sql.DB and *sql.Tx offer.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs fn in a write transaction and commits when it returns nil.
// On SQLite the transaction may be shared with others that arrive at the
// same time (groupCommit): fn's writes are still all or nothing, and
// durable when inTx returns nil.
func (s *sqlStore) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.group != nil {
		return s.group.run(ctx, fn)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// inReadTx runs fn in a read-only transaction, so reads of several tables
// see one consistent state.
func (s *sqlStore) inReadTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, s.d.readTx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// exists reports whether a row with the given id is in table (a constant
// of this package, never input).
func exists(ctx context.Context, q queryer, table, id string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// execCount runs a statement and returns the rows it changed; the caller
// wraps the error with what it was doing.
func execCount(ctx context.Context, q queryer, query string, args ...any) (int64, error) {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// getOne runs a query for one row and scans it with scan; the error is
// rowError's, with what naming the row.
func getOne[T any](ctx context.Context, q queryer, scan func(scanner) (T, error), what, query string, args ...any) (T, error) {
	v, err := scan(q.QueryRowContext(ctx, query, args...))
	if err != nil {
		var zero T
		return zero, rowError(what, err)
	}
	return v, nil
}

// rowError is the error of reading the one row what names: ErrNotFound
// when there is none, any other failure as "get <what>"; nil stays nil.
func rowError(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	default:
		return fmt.Errorf("get %s: %w", what, err)
	}
}

// queryAll runs a query and scans every row with scan; callers wrap the
// error with what they were listing. An empty result is an empty slice.
func queryAll[T any](ctx context.Context, q queryer, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
