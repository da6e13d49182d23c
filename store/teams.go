package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/model"
)

// Teams keeps principals, their API tokens (as hashes) and the labels that
// token scopes select by.
type Teams interface {
	// CreatePrincipal fills ID (if empty) and CreatedAt; ErrConflict when
	// the name is taken.
	CreatePrincipal(ctx context.Context, p *model.Principal) error
	// GetPrincipal finds a principal by id or, failing that, by name.
	GetPrincipal(ctx context.Context, idOrName string) (*model.Principal, error)
	ListPrincipals(ctx context.Context) ([]model.Principal, error)
	// DeletePrincipal deletes the principal and its tokens.
	DeletePrincipal(ctx context.Context, id string) error

	// CreateToken keeps t (its ID set by the caller, PrincipalID an
	// existing principal) with hash, the SHA-256 of the token.
	CreateToken(ctx context.Context, t *model.Token, hash []byte) error
	// TokenByID returns the token, its principal's name in Principal, the
	// hash kept for it and whether its principal is disabled.
	TokenByID(ctx context.Context, id string) (*model.Token, []byte, bool, error)
	ListTokens(ctx context.Context) ([]model.Token, error)
	DeleteToken(ctx context.Context, id string) error
	// TouchToken records when a token was last used.
	TouchToken(ctx context.Context, id string, at time.Time) error

	// SetLabels replaces the labels of a stack, cluster or release (none:
	// forget them); Labels reads them (nil when none); AllLabels reads
	// those of every resource of a kind, by id.
	SetLabels(ctx context.Context, kind model.ScopeKind, id string, labels map[string]string) error
	Labels(ctx context.Context, kind model.ScopeKind, id string) (map[string]string, error)
	AllLabels(ctx context.Context, kind model.ScopeKind) (map[string]map[string]string, error)

	// AppendAudit appends entries to the audit trail in one transaction.
	AppendAudit(ctx context.Context, entries []model.AuditEntry) error
	// ListAudit lists entries newest first (see model.AuditFilter).
	ListAudit(ctx context.Context, f model.AuditFilter) ([]model.AuditEntry, error)
	// PruneAudit deletes the entries older than before.
	PruneAudit(ctx context.Context, before time.Time) (int, error)
}

const principalColumns = `id, name, kind, created_at, disabled`

func scanPrincipal(row scanner) (model.Principal, error) {
	var p model.Principal
	err := row.Scan(&p.ID, &p.Name, &p.Kind, timeCol{&p.CreatedAt}, &p.Disabled)
	return p, err
}

func (s *sqlStore) CreatePrincipal(ctx context.Context, p *model.Principal) error {
	if p.ID == "" {
		p.ID = newID()
	}
	at := now()
	n, err := execCount(ctx, s.w, `INSERT INTO principals (`+principalColumns+`) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT DO NOTHING`, p.ID, p.Name, string(p.Kind), s.d.timeArg(at), p.Disabled)
	if err != nil {
		return fmt.Errorf("create principal %q: %w", p.Name, err)
	}
	if n == 0 {
		return fmt.Errorf("principal %q already exists: %w", p.Name, ErrConflict)
	}
	p.CreatedAt = at
	return nil
}

func (s *sqlStore) GetPrincipal(ctx context.Context, idOrName string) (*model.Principal, error) {
	p, err := getOne(ctx, s.r, scanPrincipal, fmt.Sprintf("principal %q", idOrName),
		`SELECT `+principalColumns+` FROM principals WHERE id = $1 OR name = $1 ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1`, idOrName)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func (s *sqlStore) ListPrincipals(ctx context.Context) ([]model.Principal, error) {
	out, err := queryAll(ctx, s.r, scanPrincipal, `SELECT `+principalColumns+` FROM principals ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list principals: %w", err)
	}
	return out, nil
}

func (s *sqlStore) DeletePrincipal(ctx context.Context, id string) error {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE principal_id = $1`, id); err != nil {
			return err
		}
		var err error
		n, err = execCount(ctx, tx, `DELETE FROM principals WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete principal %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("principal %q: %w", id, ErrNotFound)
	}
	return nil
}

const tokenColumns = `t.id, t.principal_id, p.name, t.prefix, t.roles, t.created_at, t.expires_at, t.last_used`

// tokenRow scans a token with its hash and principal's disabled flag.
type tokenRow struct {
	t        model.Token
	hash     []byte
	disabled bool
}

func scanToken(withSecret bool) func(scanner) (tokenRow, error) {
	return func(row scanner) (tokenRow, error) {
		var (
			r                 tokenRow
			roles             string
			expires, lastUsed sql.Null[timeValue]
		)
		dest := []any{&r.t.ID, &r.t.PrincipalID, &r.t.Principal, &r.t.Prefix, &roles, timeCol{&r.t.CreatedAt}, &expires, &lastUsed}
		if withSecret {
			dest = append(dest, &r.hash, &r.disabled)
		}
		if err := row.Scan(dest...); err != nil {
			return r, err
		}
		if err := json.Unmarshal([]byte(roles), &r.t.Roles); err != nil {
			return r, fmt.Errorf("roles of token %q: %w", r.t.ID, err)
		}
		if expires.Valid {
			at := time.Time(expires.V)
			r.t.ExpiresAt = &at
		}
		if lastUsed.Valid {
			at := time.Time(lastUsed.V)
			r.t.LastUsed = &at
		}
		return r, nil
	}
}

// timeValue scans a non-null time column of either dialect.
type timeValue time.Time

func (v *timeValue) Scan(src any) error {
	var t time.Time
	if err := (timeCol{&t}).Scan(src); err != nil {
		return err
	}
	*v = timeValue(t)
	return nil
}

func (s *sqlStore) CreateToken(ctx context.Context, t *model.Token, hash []byte) error {
	if t.ID == "" || len(hash) == 0 {
		return errors.New("create token: id and hash are required")
	}
	roles, err := json.Marshal(t.Roles)
	if err != nil {
		return fmt.Errorf("create token %q: roles: %w", t.ID, err)
	}
	at := now()
	var expires any
	if t.ExpiresAt != nil {
		expires = s.d.timeArg(*t.ExpiresAt)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO api_tokens (id, principal_id, token_hash, prefix, roles, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, t.PrincipalID, hash, t.Prefix, string(roles), s.d.timeArg(at), expires)
	if err != nil {
		return fmt.Errorf("create token of principal %q: %w", t.PrincipalID, err)
	}
	t.CreatedAt = at
	return nil
}

func (s *sqlStore) TokenByID(ctx context.Context, id string) (*model.Token, []byte, bool, error) {
	r, err := getOne(ctx, s.r, scanToken(true), fmt.Sprintf("token %q", id), `SELECT `+tokenColumns+`, t.token_hash, p.disabled
		FROM api_tokens t JOIN principals p ON p.id = t.principal_id WHERE t.id = $1`, id)
	if err != nil {
		return nil, nil, false, err
	}
	return &r.t, r.hash, r.disabled, nil
}

func (s *sqlStore) ListTokens(ctx context.Context) ([]model.Token, error) {
	rows, err := queryAll(ctx, s.r, scanToken(false), `SELECT `+tokenColumns+`
		FROM api_tokens t JOIN principals p ON p.id = t.principal_id ORDER BY p.name, t.created_at, t.id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make([]model.Token, len(rows))
	for i, r := range rows {
		out[i] = r.t
	}
	return out, nil
}

func (s *sqlStore) DeleteToken(ctx context.Context, id string) error {
	n, err := execCount(ctx, s.w, `DELETE FROM api_tokens WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete token %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("token %q: %w", id, ErrNotFound)
	}
	return nil
}

func (s *sqlStore) TouchToken(ctx context.Context, id string, at time.Time) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE api_tokens SET last_used = $2 WHERE id = $1`, id, s.d.timeArg(normTime(at))); err != nil {
		return fmt.Errorf("touch token %q: %w", id, err)
	}
	return nil
}

func (s *sqlStore) SetLabels(ctx context.Context, kind model.ScopeKind, id string, labels map[string]string) error {
	if len(labels) == 0 {
		if _, err := s.w.ExecContext(ctx, `DELETE FROM labels WHERE kind = $1 AND owner_id = $2`, string(kind), id); err != nil {
			return fmt.Errorf("labels of %s %q: %w", kind, id, err)
		}
		return nil
	}
	b, err := json.Marshal(labels)
	if err != nil {
		return fmt.Errorf("labels of %s %q: %w", kind, id, err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO labels (kind, owner_id, labels) VALUES ($1, $2, $3)
		ON CONFLICT (kind, owner_id) DO UPDATE SET labels = excluded.labels`, string(kind), id, string(b)); err != nil {
		return fmt.Errorf("labels of %s %q: %w", kind, id, err)
	}
	return nil
}

func (s *sqlStore) Labels(ctx context.Context, kind model.ScopeKind, id string) (map[string]string, error) {
	var raw string
	err := s.r.QueryRowContext(ctx, `SELECT labels FROM labels WHERE kind = $1 AND owner_id = $2`, string(kind), id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("labels of %s %q: %w", kind, id, err)
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("labels of %s %q: %w", kind, id, err)
	}
	return out, nil
}

func (s *sqlStore) AllLabels(ctx context.Context, kind model.ScopeKind) (map[string]map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT owner_id, labels FROM labels WHERE kind = $1`, string(kind))
	if err != nil {
		return nil, fmt.Errorf("labels of every %s: %w", kind, err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("labels of every %s: %w", kind, err)
		}
		var l map[string]string
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			return nil, fmt.Errorf("labels of %s %q: %w", kind, id, err)
		}
		out[id] = l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("labels of every %s: %w", kind, err)
	}
	return out, nil
}
