package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// marshalTree encodes a settings or attributes tree as JSON text; nil is
// "null".
func marshalTree(m map[string]any) (string, error) {
	if m == nil {
		return "null", nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(raw), nil
}

// unmarshalTree decodes what marshalTree wrote; "null" and "" are nil.
// Numbers come back as float64, as from any JSON request.
func unmarshalTree(s string) (map[string]any, error) {
	if s == "" || s == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// UpdateClusterSettings replaces a cluster's settings with what fn makes
// of the stored ones (nil when none), in one write transaction, so two
// concurrent patches never lose one another's change. fn must not keep
// the map it is given. It returns the settings stored, or ErrNotFound.
// It costs one read and one write of the settings row.
func (s *sqlStore) UpdateClusterSettings(ctx context.Context, id string, fn func(map[string]any) (map[string]any, error)) (map[string]any, error) {
	var out map[string]any
	var fnErr error
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		lock := ""
		if s.d.name == postgresDialect.name {
			lock = " FOR UPDATE"
		}
		var stored string
		err := tx.QueryRowContext(ctx, `SELECT settings FROM clusters WHERE id = $1`+lock, id).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("cluster %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		current, err := unmarshalTree(stored)
		if err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		next, err := fn(current)
		if err != nil {
			fnErr = err
			return err
		}
		text, err := marshalTree(next)
		if err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE clusters SET settings = $1, updated_at = $2 WHERE id = $3`,
			text, s.d.timeArg(now()), id); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		if fnErr != nil || errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("update settings of cluster %q: %w", id, err)
	}
	return out, nil
}
