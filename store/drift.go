package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// DriftRecord is what the store keeps of a stack's drift checks: whether a
// drift is repaired, and the last check. The schedule itself lives in
// Temporal.
type DriftRecord struct {
	Repair bool
	// Watch says the stack's resources are watched (model.DriftSettings).
	Watch bool
	// LastCheck is the JSON of the last model.DriftCheck (nil before the
	// first); a sealing store keeps it sealed, as its diffs may show what
	// a resource holds.
	LastCheck []byte
}

// Check decodes the last check; nil before the first.
func (r *DriftRecord) Check() (*model.DriftCheck, error) {
	if len(r.LastCheck) == 0 {
		return nil, nil
	}
	var c model.DriftCheck
	if err := json.Unmarshal(r.LastCheck, &c); err != nil {
		return nil, fmt.Errorf("last drift check: %w", err)
	}
	return &c, nil
}

// SaveDriftCheck replaces the stack's last drift check (ErrNotFound when
// the stack has no drift record: its schedule was deleted meanwhile). One
// write.
func SaveDriftCheck(ctx context.Context, s Store, stackID string, check model.DriftCheck) error {
	raw, err := json.Marshal(check)
	if err != nil {
		return fmt.Errorf("put drift check of stack %q: %w", stackID, err)
	}
	return s.PutDriftCheck(ctx, stackID, raw)
}

// PutDriftSettings records whether the stack's drift checks repair what
// they find and whether its resources are watched, creating the stack's drift record (ErrNotFound without the
// stack). The last check stays. One write.
func (s *sqlStore) PutDriftSettings(ctx context.Context, stackID string, repair, watch bool) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "stacks", stackID); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("stack %q: %w", stackID, ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO stack_drift (stack_id, repair, watch, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (stack_id) DO UPDATE SET repair = excluded.repair, watch = excluded.watch, updated_at = excluded.updated_at`,
			stackID, boolInt(repair), boolInt(watch), s.d.timeArg(now()))
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("put drift settings of stack %q: %w", stackID, err)
	}
	return err
}

// GetDrift returns the stack's drift record (ErrNotFound when it has none).
func (s *sqlStore) GetDrift(ctx context.Context, stackID string) (*DriftRecord, error) {
	var repair, watch int
	var last []byte
	err := s.r.QueryRowContext(ctx, `SELECT repair, watch, last_check FROM stack_drift WHERE stack_id = $1`, stackID).Scan(&repair, &watch, &last)
	if err != nil {
		return nil, rowError(fmt.Sprintf("drift of stack %q", stackID), err)
	}
	return &DriftRecord{Repair: repair != 0, Watch: watch != 0, LastCheck: last}, nil
}

// WatchedStacks lists the ids of the stacks whose drift settings ask for
// watching, in id order. One read; an id a row.
func (s *sqlStore) WatchedStacks(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT stack_id FROM stack_drift WHERE watch <> 0 ORDER BY stack_id`)
	if err != nil {
		return nil, fmt.Errorf("list watched stacks: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list watched stacks: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list watched stacks: %w", err)
	}
	return ids, nil
}

// PutDriftCheck replaces the stack's last drift check, as given (see
// SaveDriftCheck).
func (s *sqlStore) PutDriftCheck(ctx context.Context, stackID string, check []byte) error {
	n, err := execCount(ctx, s.w, `UPDATE stack_drift SET last_check = $2, updated_at = $3 WHERE stack_id = $1`,
		stackID, check, s.d.timeArg(now()))
	if err != nil {
		return fmt.Errorf("put drift check of stack %q: %w", stackID, err)
	}
	if n == 0 {
		return fmt.Errorf("drift of stack %q: %w", stackID, ErrNotFound)
	}
	return nil
}

// DeleteDrift drops the stack's drift record; none is fine.
func (s *sqlStore) DeleteDrift(ctx context.Context, stackID string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM stack_drift WHERE stack_id = $1`, stackID); err != nil {
		return fmt.Errorf("delete drift of stack %q: %w", stackID, err)
	}
	return nil
}

// StackLastExecution returns the execution that last wrote the stack's
// record ("" before the first; ErrNotFound without the stack). One read.
func (s *sqlStore) StackLastExecution(ctx context.Context, stackID string) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT last_exec_id FROM stacks WHERE id = $1`, stackID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("stack %q: %w", stackID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("get the last execution of stack %q: %w", stackID, err)
	}
	return id, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
