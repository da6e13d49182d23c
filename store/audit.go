package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-io/cairn/model"
)

// MaxAuditPage bounds one page of the audit trail.
const MaxAuditPage = 1000

const auditColumns = `at, principal, method, route, path, stack, cluster, release_id, execution, status, code, request_id`

// AppendAudit writes entries in one transaction (a batch of the API's
// queue). Entries without a time are stamped now.
func (s *sqlStore) AppendAudit(ctx context.Context, entries []model.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, e := range entries {
			at := e.At
			if at.IsZero() {
				at = now()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO audit (`+auditColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
				s.d.timeArg(normTime(at)), e.Principal, e.Method, e.Route, e.Path, e.Stack, e.Cluster, e.Release,
				e.Execution, e.Status, e.Code, e.RequestID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append %d audit entries: %w", len(entries), err)
	}
	return nil
}

// ListAudit lists the entries f selects, newest first, at most f.Limit
// (bounded by MaxAuditPage; 0 means 100).
func (s *sqlStore) ListAudit(ctx context.Context, f model.AuditFilter) ([]model.AuditEntry, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Principal != "" {
		add("principal = $%d", f.Principal)
	}
	if f.Stack != "" {
		add("stack = $%d", f.Stack)
	}
	if f.Cluster != "" {
		add("cluster = $%d", f.Cluster)
	}
	if f.Execution != "" {
		add("execution = $%d", f.Execution)
	}
	if !f.Since.IsZero() {
		add("at >= $%d", s.d.timeArg(normTime(f.Since)))
	}
	if f.Before > 0 {
		add("id < $%d", f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxAuditPage)
	q := `SELECT id, ` + auditColumns + ` FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(` ORDER BY id DESC LIMIT %d`, limit)
	out, err := queryAll(ctx, s.r, func(row scanner) (model.AuditEntry, error) {
		var e model.AuditEntry
		err := row.Scan(&e.ID, timeCol{&e.At}, &e.Principal, &e.Method, &e.Route, &e.Path, &e.Stack, &e.Cluster,
			&e.Release, &e.Execution, &e.Status, &e.Code, &e.RequestID)
		return e, err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// PruneAudit deletes the entries older than before.
func (s *sqlStore) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	n, err := execCount(ctx, s.w, `DELETE FROM audit WHERE at < $1`, s.d.timeArg(normTime(before)))
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return int(n), nil
}
