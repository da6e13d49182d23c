package starter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// nonce records a one-time nonce for a start under workflow id wfID and
// returns it for the workflow's input (workflows.Settings.Nonce), whose
// first activity consumes it. Cost: one row write.
func (s *Starter) nonce(ctx context.Context, wfID string) (string, error) {
	if s.cfg.Store == nil {
		return "", errors.New("start: the starter has no store to record the start's nonce in")
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	n := hex.EncodeToString(b[:])
	if err := s.cfg.Store.PutStartNonce(ctx, n, wfID); err != nil {
		return "", fmt.Errorf("start %s: %w", wfID, err)
	}
	return n, nil
}
