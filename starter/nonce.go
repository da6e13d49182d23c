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
	n := newNonce()
	if err := s.cfg.Store.PutStartNonce(ctx, n, wfID); err != nil {
		return "", fmt.Errorf("start %s: %w", wfID, err)
	}
	return n, nil
}

// actNonce records a one-time nonce for act (approve, reject) by
// principal on workflow wfID and returns it for the Update's request,
// which the workflow consumes, taking the principal from the record.
// Cost: one row write.
func (s *Starter) actNonce(ctx context.Context, wfID, act, principal string) (string, error) {
	if s.cfg.Store == nil {
		return "", fmt.Errorf("%s: the starter has no store to record the nonce in", act)
	}
	n := newNonce()
	if err := s.cfg.Store.PutActNonce(ctx, n, wfID, act, principal); err != nil {
		return "", fmt.Errorf("%s %s: %w", act, wfID, err)
	}
	return n, nil
}

// newNonce is 128 random bits, in hex.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
