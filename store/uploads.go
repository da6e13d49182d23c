package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/model"
)

// ErrGone is returned (wrapped) for an upload that expired.
var ErrGone = errors.New("gone")

// QuotaError refuses a part that would take an upload, or every open
// upload together, past its bound (in bytes sent).
type QuotaError struct {
	// Server is true for the bound on every open upload together, false
	// for one upload's.
	Server bool
	Limit  int64
	// Held is what the parts already held, without the refused one.
	Held int64
}

func (e *QuotaError) Error() string {
	if e.Server {
		return fmt.Sprintf("open uploads hold %d bytes; this part would take them past the server's quota of %d bytes", e.Held, e.Limit)
	}
	return fmt.Sprintf("the upload holds %d bytes; this part would take it past its limit of %d bytes", e.Held, e.Limit)
}

// UploadQuota bounds what uploads hold, in bytes sent: one upload's parts
// together, and the parts of every open upload (neither used nor
// expired) together. Zero means no bound.
type UploadQuota struct {
	UploadBytes int64
	TotalBytes  int64
}

// UploadPartData is a part to keep: its record, what the commit reads of
// it (Info, opaque JSON) and its content (kept as a snapshot once the
// upload is used).
type UploadPartData struct {
	model.UploadPart
	Info    []byte
	Content []byte
}

// CreateUpload records a new upload of a stack, filling ID and CreatedAt.
func (s *sqlStore) CreateUpload(ctx context.Context, u *model.Upload) error {
	if u.ID == "" {
		u.ID = newID()
	}
	u.CreatedAt = now()
	u.ExpiresAt = normTime(u.ExpiresAt)
	_, err := s.w.ExecContext(ctx, `INSERT INTO uploads (id, stack_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		u.ID, u.StackID, s.d.timeArg(u.CreatedAt), s.d.timeArg(u.ExpiresAt))
	if err != nil {
		if ok, _ := exists(ctx, s.r, "stacks", u.StackID); !ok {
			return fmt.Errorf("stack %q: %w", u.StackID, ErrNotFound)
		}
		return fmt.Errorf("create upload: %w", err)
	}
	return nil
}

// GetUpload reads an upload with its parts' records (not their content),
// expired or not: the caller says what an expired one means.
func (s *sqlStore) GetUpload(ctx context.Context, id string) (*model.Upload, error) {
	var u *model.Upload
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		u, err = getOne(ctx, tx, scanUpload, fmt.Sprintf("upload %q", id),
			`SELECT id, stack_id, created_at, expires_at, snapshot_hash FROM uploads WHERE id = $1`, id)
		if err != nil {
			return err
		}
		u.Parts, err = queryAll(ctx, tx, scanUploadPart, `SELECT `+uploadPartColumns+` FROM upload_parts WHERE upload_id = $1 ORDER BY part`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, p := range u.Parts {
		u.Bytes += p.Bytes
		u.Resources += p.Resources
	}
	return u, nil
}

const uploadPartColumns = `part, sha256, bytes, documents, resources, kinds, name, line, document, created_at, content_hash`

func scanUpload(r scanner) (*model.Upload, error) {
	u := &model.Upload{Parts: []model.UploadPart{}}
	err := r.Scan(&u.ID, &u.StackID, timeCol{&u.CreatedAt}, timeCol{&u.ExpiresAt}, &u.SnapshotHash)
	return u, err
}

func scanUploadPart(r scanner) (model.UploadPart, error) {
	var p model.UploadPart
	err := r.Scan(&p.Part, &p.SHA256, &p.Bytes, &p.Documents, &p.Resources, &p.Kinds, &p.Name, &p.Line, &p.Document, timeCol{&p.CreatedAt}, &p.Snapshot)
	return p, err
}

// UploadPart reads the record of an upload's part n: ErrNotFound when the
// upload has no such part (or is not there).
func (s *sqlStore) UploadPart(ctx context.Context, id string, n int) (*model.UploadPart, error) {
	p, err := getOne(ctx, s.r, scanUploadPart, fmt.Sprintf("part %d of upload %q", n, id),
		`SELECT `+uploadPartColumns+` FROM upload_parts WHERE upload_id = $1 AND part = $2`, id, n)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// UploadPartInfo reads what was kept of part n for the commit (Info).
func (s *sqlStore) UploadPartInfo(ctx context.Context, id string, n int) ([]byte, error) {
	var info []byte
	err := s.r.QueryRowContext(ctx, `SELECT info FROM upload_parts WHERE upload_id = $1 AND part = $2`, id, n).Scan(&info)
	if err != nil {
		return nil, rowError(fmt.Sprintf("part %d of upload %q", n, id), err)
	}
	return info, nil
}

// PutUploadPart keeps part n of an upload and moves its expiry to
// expiresAt. The same body again (by SHA-256) changes nothing but the
// expiry and returns the part kept (created false); another body for a
// part already kept is ErrConflict, and so is any part of an upload
// already used. An upload that is not there is ErrNotFound, one that
// expired ErrGone; a part past q is a *QuotaError. The checks and the
// write are one transaction.
func (s *sqlStore) PutUploadPart(ctx context.Context, id string, p UploadPartData, q UploadQuota, expiresAt time.Time) (*model.UploadPart, bool, error) {
	sum := sha256.Sum256(p.Content)
	p.Snapshot = hex.EncodeToString(sum[:])
	p.CreatedAt = now()
	t := now()
	var kept *model.UploadPart
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var expires time.Time
		var snapshot string
		lock := ""
		if s.d.name == postgresDialect.name {
			lock = " FOR UPDATE"
		}
		err := tx.QueryRowContext(ctx, `SELECT expires_at, snapshot_hash FROM uploads WHERE id = $1`+lock, id).Scan(timeCol{&expires}, &snapshot)
		switch {
		case err != nil:
			return rowError(fmt.Sprintf("upload %q", id), err)
		case snapshot != "":
			return fmt.Errorf("upload %q was used by an apply or dry-run; its parts can no longer change: %w", id, ErrConflict)
		case !expires.After(t):
			return fmt.Errorf("upload %q expired at %s: %w", id, expires.Format(time.RFC3339), ErrGone)
		}
		old, err := scanUploadPart(tx.QueryRowContext(ctx, `SELECT `+uploadPartColumns+` FROM upload_parts WHERE upload_id = $1 AND part = $2`, id, p.Part))
		switch {
		case err == nil && old.SHA256 == p.SHA256:
			kept = &old
		case err == nil:
			return fmt.Errorf("part %d of upload %q holds another body (sha256 %s): %w", p.Part, id, old.SHA256, ErrConflict)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		default:
			if err := checkUploadQuota(ctx, tx, s.d, id, p.Bytes, q, t); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO upload_parts (upload_id, part, sha256, bytes, documents, resources, kinds, name, line, document,
				created_at, info, content_hash, content) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
				id, p.Part, p.SHA256, p.Bytes, p.Documents, p.Resources, p.Kinds, p.Name, p.Line, p.Document,
				s.d.timeArg(p.CreatedAt), nonNil(p.Info), p.Snapshot, nonNil(p.Content)); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE uploads SET expires_at = $2 WHERE id = $1`, id, s.d.timeArg(normTime(expiresAt)))
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrGone) {
			return nil, false, err
		}
		var qe *QuotaError
		if errors.As(err, &qe) {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("put part %d of upload %q: %w", p.Part, id, err)
	}
	if kept != nil {
		return kept, false, nil
	}
	out := p.UploadPart
	return &out, true, nil
}

// checkUploadQuota refuses n more bytes for upload id past q.
func checkUploadQuota(ctx context.Context, tx *sql.Tx, d dialect, id string, n int64, q UploadQuota, t time.Time) error {
	if q.UploadBytes > 0 {
		var held int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(bytes), 0) FROM upload_parts WHERE upload_id = $1`, id).Scan(&held); err != nil {
			return err
		}
		if held+n > q.UploadBytes {
			return &QuotaError{Limit: q.UploadBytes, Held: held}
		}
	}
	if q.TotalBytes > 0 {
		var held int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(p.bytes), 0) FROM upload_parts p JOIN uploads u ON u.id = p.upload_id
			WHERE u.snapshot_hash = '' AND u.expires_at > $1`, d.timeArg(t)).Scan(&held); err != nil {
			return err
		}
		if held+n > q.TotalBytes {
			return &QuotaError{Server: true, Limit: q.TotalBytes, Held: held}
		}
	}
	return nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CommitUpload makes an upload's package a snapshot: each part's content
// becomes a snapshot of kind partKind (under the part's Snapshot hash),
// manifest one of kind manifestKind, the upload records the manifest's
// hash and summary (opaque: what later runs need to know of the package)
// and its parts' rows go. parts are the parts the caller read and
// checked; when the upload holds others now (a part came meanwhile) the
// commit is ErrConflict. Committing a used upload again returns its hash
// and summary as they were kept (manifest and summary may then be nil).
// An expired upload is ErrGone. Cost: the parts' content is copied inside
// the database, never read into this process.
func (s *sqlStore) CommitUpload(ctx context.Context, id string, parts []model.UploadPart, partKind, manifestKind string, manifest, summary []byte) (string, []byte, error) {
	sum := sha256.Sum256(manifest)
	hash := hex.EncodeToString(sum[:])
	t := now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var expires time.Time
		var snapshot string
		lock := ""
		if s.d.name == postgresDialect.name {
			lock = " FOR UPDATE"
		}
		var kept []byte
		err := tx.QueryRowContext(ctx, `SELECT expires_at, snapshot_hash, summary FROM uploads WHERE id = $1`+lock, id).Scan(timeCol{&expires}, &snapshot, &kept)
		switch {
		case err != nil:
			return rowError(fmt.Sprintf("upload %q", id), err)
		case !expires.After(t):
			return fmt.Errorf("upload %q expired at %s: %w", id, expires.Format(time.RFC3339), ErrGone)
		case snapshot != "":
			hash, summary = snapshot, kept
			return nil
		case manifest == nil:
			return fmt.Errorf("upload %q was not used yet and no manifest was given: %w", id, ErrConflict)
		}
		held, err := queryAll(ctx, tx, scanUploadPart, `SELECT `+uploadPartColumns+` FROM upload_parts WHERE upload_id = $1 ORDER BY part`, id)
		if err != nil {
			return err
		}
		if len(held) != len(parts) {
			return fmt.Errorf("upload %q holds %d parts, %d were checked: %w", id, len(held), len(parts), ErrConflict)
		}
		for i := range held {
			if held[i].Part != parts[i].Part || held[i].SHA256 != parts[i].SHA256 {
				return fmt.Errorf("part %d of upload %q changed while it was checked: %w", held[i].Part, id, ErrConflict)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO snapshots (hash, kind, content, created_at)
			SELECT content_hash, $2, content, $3 FROM upload_parts WHERE upload_id = $1
			ON CONFLICT (hash) DO NOTHING`, id, partKind, s.d.timeArg(t)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO snapshots (hash, kind, content, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (hash) DO NOTHING`, hash, manifestKind, manifest, s.d.timeArg(t)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM upload_parts WHERE upload_id = $1`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE uploads SET snapshot_hash = $2, summary = $3 WHERE id = $1`, id, hash, nonNil(summary))
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrGone) {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("commit upload %q: %w", id, err)
	}
	return hash, summary, nil
}

// DeleteUpload drops an upload and its parts.
func (s *sqlStore) DeleteUpload(ctx context.Context, id string) error {
	n, err := execCount(ctx, s.w, `DELETE FROM uploads WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete upload %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("upload %q: %w", id, ErrNotFound)
	}
	return nil
}

// PruneUploads drops the parts of uploads that expired by t, and the
// uploads themselves (and used ones) once expired for longer than keep,
// so an upload answers "expired" for keep before it is unknown. It
// returns how many rows it dropped.
func (s *sqlStore) PruneUploads(ctx context.Context, t time.Time, keep time.Duration) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		parts, err := execCount(ctx, tx, `DELETE FROM upload_parts WHERE upload_id IN (SELECT id FROM uploads WHERE expires_at <= $1)`, s.d.timeArg(normTime(t)))
		if err != nil {
			return err
		}
		gone, err := execCount(ctx, tx, `DELETE FROM uploads WHERE expires_at <= $1`, s.d.timeArg(normTime(t.Add(-keep))))
		n = parts + gone
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune uploads: %w", err)
	}
	return int(n), nil
}
