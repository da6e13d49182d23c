package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// PutSnapshot stores content under its sha256 hex hash. Storing the same
// content again changes nothing (the first kind recorded stays).
func (s *sqlStore) PutSnapshot(ctx context.Context, kind string, content []byte) (string, error) {
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	if content == nil {
		content = []byte{}
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO snapshots (hash, kind, content, created_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING`,
		hash, kind, content, s.d.timeArg(now())); err != nil {
		return "", fmt.Errorf("put %s snapshot %s: %w", kind, hash, err)
	}
	return hash, nil
}

func (s *sqlStore) GetSnapshot(ctx context.Context, hash string) (*model.Snapshot, error) {
	snap := model.Snapshot{Hash: hash}
	err := s.r.QueryRowContext(ctx, `SELECT kind, content, created_at FROM snapshots WHERE hash = $1`, hash).
		Scan(&snap.Kind, &snap.Content, timeCol{&snap.CreatedAt})
	if err != nil {
		return nil, rowError(fmt.Sprintf("snapshot %q", hash), err)
	}
	if snap.Content == nil {
		snap.Content = []byte{}
	}
	return &snap, nil
}
