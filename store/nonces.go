package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNonceUsed is returned (wrapped) when a start nonce is unknown or was
// consumed by another run.
var ErrNonceUsed = errors.New("start not issued by this Cairn or already used")

// PutStartNonce records a start's one-time nonce for execution execID.
// One write.
func (s *sqlStore) PutStartNonce(ctx context.Context, nonce, execID string) error {
	if _, err := s.w.ExecContext(ctx, `INSERT INTO start_nonces (nonce, execution, created_at) VALUES ($1, $2, $3)`,
		nonce, execID, s.d.timeArg(normTime(now()))); err != nil {
		return fmt.Errorf("record start nonce of %s: %w", execID, err)
	}
	return nil
}

// ConsumeStartNonce marks the nonce consumed by run (a workflow run id):
// nil when it was unconsumed, or consumed by that same run already (a
// retry); ErrNonceUsed when it is unknown or another run consumed it. One
// write (a second read only when the write changed nothing).
func (s *sqlStore) ConsumeStartNonce(ctx context.Context, nonce, run string) error {
	n, err := execCount(ctx, s.w, `UPDATE start_nonces SET consumed_by = $2 WHERE nonce = $1 AND consumed_by IS NULL`, nonce, run)
	if err != nil {
		return fmt.Errorf("consume start nonce: %w", err)
	}
	if n == 1 {
		return nil
	}
	var by sql.NullString
	err = s.r.QueryRowContext(ctx, `SELECT consumed_by FROM start_nonces WHERE nonce = $1`, nonce).Scan(&by)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNonceUsed
	case err != nil:
		return fmt.Errorf("consume start nonce: %w", err)
	case by.String == run:
		return nil
	}
	return ErrNonceUsed
}

// startNoncesMigration is the version of the migration that made start
// nonces (0013_start_nonces.sql).
const startNoncesMigration = 13

// StartNoncesSince is when this store began recording start nonces (the
// migration that made their table was applied), so that a start without
// one, from a server of an earlier release, can be told from a copy made
// long after. One read.
func (s *sqlStore) StartNoncesSince(ctx context.Context) (time.Time, error) {
	var at string
	err := s.r.QueryRowContext(ctx, `SELECT applied_at FROM schema_migrations WHERE version = $1`, startNoncesMigration).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("when start nonces began: %w", err)
	}
	t, err := time.Parse(sqliteTimeLayout, at)
	if err != nil {
		return time.Time{}, fmt.Errorf("when start nonces began: %q: %w", at, err)
	}
	return t, nil
}

// PruneStartNonces drops the nonces recorded before t, consumed or not
// (a start's workflow consumes its nonce within moments; one older than
// the retention was never started, or its run is long over). It returns
// how many it dropped. One statement.
func (s *sqlStore) PruneStartNonces(ctx context.Context, t time.Time) (int, error) {
	n, err := execCount(ctx, s.w, `DELETE FROM start_nonces WHERE created_at < $1`, s.d.timeArg(normTime(t)))
	if err != nil {
		return 0, fmt.Errorf("prune start nonces: %w", err)
	}
	return int(n), nil
}
