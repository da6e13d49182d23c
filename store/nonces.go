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

// ConsumeStartNonce marks the nonce recorded for workflow execution
// consumed by run (a workflow run id): nil when it was unconsumed, or
// consumed by that same run already (a retry); ErrNonceUsed when it is
// unknown, was recorded for another execution (an input copied under
// another id), or another run consumed it. One statement.
func (s *sqlStore) ConsumeStartNonce(ctx context.Context, nonce, execution, run string) error {
	n, err := execCount(ctx, s.w, `UPDATE start_nonces SET consumed_by = $3
		WHERE nonce = $1 AND execution = $2 AND act IS NULL AND (consumed_by IS NULL OR consumed_by = $3)`, nonce, execution, run)
	if err != nil {
		return fmt.Errorf("consume start nonce: %w", err)
	}
	if n != 1 {
		return ErrNonceUsed
	}
	return nil
}

// PutActNonce records a one-time nonce for an operator's act on workflow
// execution (act "approve" or "reject"), naming the principal the API
// authenticated. One write.
func (s *sqlStore) PutActNonce(ctx context.Context, nonce, execution, act, principal string) error {
	if act == "" {
		return errors.New("record act nonce: no act")
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO start_nonces (nonce, execution, act, principal, created_at) VALUES ($1, $2, $3, $4, $5)`,
		nonce, execution, act, principal, s.d.timeArg(normTime(now()))); err != nil {
		return fmt.Errorf("record %s nonce of %s: %w", act, execution, err)
	}
	return nil
}

// ConsumeActNonce marks the nonce of act on execution consumed by
// consumer (the run, and the Update carrying the act) and returns the
// principal recorded with it: what the store vouches for, not what the
// caller claims. ErrNonceUsed when it is unknown, was issued for another
// execution or act, or another consumer took it; a retry by the same
// consumer passes. One statement.
func (s *sqlStore) ConsumeActNonce(ctx context.Context, nonce, execution, act, consumer string) (string, error) {
	var principal sql.NullString
	err := s.w.QueryRowContext(ctx, `UPDATE start_nonces SET consumed_by = $4
		WHERE nonce = $1 AND execution = $2 AND act = $3 AND (consumed_by IS NULL OR consumed_by = $4)
		RETURNING principal`, nonce, execution, act, consumer).Scan(&principal)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", ErrNonceUsed
	case err != nil:
		return "", fmt.Errorf("consume %s nonce: %w", act, err)
	}
	return principal.String, nil
}

// startNoncesMigration is the version of the migration that made start
// nonces (0013_start_nonces.sql).
const startNoncesMigration = 13

// StartNoncesSince is when this store began recording start nonces (the
// migration that made their table was applied), so that a start without
// one, from a server of an earlier release, can be told from a copy made
// long after. fresh says the store never held anything before: its first
// migration was applied in the same run (within a minute), so no server
// of an earlier release ever used it. One read, the first time.
func (s *sqlStore) StartNoncesSince(ctx context.Context) (since time.Time, fresh bool, err error) {
	s.noncesMu.Lock()
	defer s.noncesMu.Unlock()
	if !s.noncesSince.IsZero() {
		return s.noncesSince, s.noncesFresh, nil
	}
	var first time.Time
	rows, err := s.r.QueryContext(ctx, `SELECT version, applied_at FROM schema_migrations WHERE version IN (1, $1)`, startNoncesMigration)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("when start nonces began: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		var at time.Time
		if err := rows.Scan(&v, timeCol{&at}); err != nil {
			return time.Time{}, false, fmt.Errorf("when start nonces began: %w", err)
		}
		if v == 1 {
			first = at
		} else {
			since = at
		}
	}
	if err := rows.Err(); err != nil {
		return time.Time{}, false, fmt.Errorf("when start nonces began: %w", err)
	}
	if since.IsZero() || first.IsZero() {
		return time.Time{}, false, errors.New("when start nonces began: the store's migrations are not recorded")
	}
	s.noncesSince, s.noncesFresh = since, since.Sub(first) < time.Minute
	return s.noncesSince, s.noncesFresh, nil
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
