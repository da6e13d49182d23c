package store

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// sealedPrefix marks a step data value sealed by WithSealer (version 1:
// AES-256-GCM, 12-byte nonce, then ciphertext and tag).
var sealedPrefix = []byte("CSD1")

// MinSealingKeyLen is the shortest key WithSealer accepts.
const MinSealingKeyLen = 16

// WithSealer returns a Store that encrypts step data values and nodes'
// deployment data at rest with AES-256-GCM; everything else passes through
// to s. The cipher key is
// derived from key (HMAC-SHA256 with a fixed label), so the same secret can
// also serve other purposes (the server's CAIRN_CODEC_KEY) without the keys
// being the same. Each value is bound to its (execution, kind, step), so a
// sealed value copied to another row does not open. Values written before
// sealing was enabled are read back as they are.
func WithSealer(s Store, key []byte) (Store, error) {
	if len(key) < MinSealingKeyLen {
		return nil, fmt.Errorf("store sealing key: %d bytes, want at least %d", len(key), MinSealingKeyLen)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("cairn store step data v1"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("store sealing key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("store sealing key: %w", err)
	}
	return &sealedStore{Store: s, aead: aead}, nil
}

// ErrUnsealable is returned (wrapped) when a sealed value does not open:
// the key is wrong or the value was tampered with.
var ErrUnsealable = errors.New("sealed value does not open (wrong key or tampered data)")

type sealedStore struct {
	Store
	aead cipher.AEAD
}

func additionalData(execID, stepID, kind string) []byte {
	return []byte(execID + "\x00" + kind + "\x00" + stepID)
}

func (s *sealedStore) seal(execID, stepID, kind string, plain []byte) []byte {
	out := make([]byte, 0, len(sealedPrefix)+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	out = append(out, sealedPrefix...)
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	out = append(out, nonce...)
	return s.aead.Seal(out, nonce, plain, additionalData(execID, stepID, kind))
}

func (s *sealedStore) open(execID, stepID, kind string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, sealedPrefix) {
		return stored, nil
	}
	body := stored[len(sealedPrefix):]
	if len(body) < s.aead.NonceSize()+s.aead.Overhead() {
		return nil, fmt.Errorf("%s data of step %q of %s: %w", kind, stepID, execID, ErrUnsealable)
	}
	nonce, ct := body[:s.aead.NonceSize()], body[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, ct, additionalData(execID, stepID, kind))
	if err != nil {
		return nil, fmt.Errorf("%s data of step %q of %s: %w", kind, stepID, execID, ErrUnsealable)
	}
	if plain == nil {
		plain = []byte{}
	}
	return plain, nil
}

func (s *sealedStore) PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error {
	return s.Store.PutStepData(ctx, execID, stepID, kind, s.seal(execID, stepID, kind, data))
}

func (s *sealedStore) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	sealed := make(map[string][]byte, len(data))
	for id, v := range data {
		sealed[id] = s.seal(execID, id, kind, v)
	}
	return s.Store.PutStepDataBatch(ctx, execID, kind, sealed)
}

func (s *sealedStore) GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error) {
	stored, err := s.Store.GetStepData(ctx, execID, stepID, kind)
	if err != nil {
		return nil, err
	}
	return s.open(execID, stepID, kind, stored)
}

func (s *sealedStore) EachStepData(ctx context.Context, execID, kind string, fn func(stepID string, data []byte) error) error {
	return s.Store.EachStepData(ctx, execID, kind, func(id string, v []byte) error {
		plain, err := s.open(execID, id, kind, v)
		if err != nil {
			return err
		}
		return fn(id, plain)
	})
}

func (s *sealedStore) ListStepData(ctx context.Context, execID, kind string) (map[string][]byte, error) {
	stored, err := s.Store.ListStepData(ctx, execID, kind)
	if err != nil {
		return nil, err
	}
	for id, v := range stored {
		if stored[id], err = s.open(execID, id, kind, v); err != nil {
			return nil, err
		}
	}
	return stored, nil
}

// deploymentKind binds sealed deployment data to its row.
const deploymentKind = "deployment-data"

func (s *sealedStore) PutDeploymentData(ctx context.Context, clusterID, nodeID, execID string, data []byte) error {
	return s.Store.PutDeploymentData(ctx, clusterID, nodeID, execID, s.seal(execID, clusterID+"\x00"+nodeID, deploymentKind, data))
}

func (s *sealedStore) GetDeploymentData(ctx context.Context, clusterID, nodeID, execID string) ([]byte, error) {
	stored, err := s.Store.GetDeploymentData(ctx, clusterID, nodeID, execID)
	if err != nil {
		return nil, err
	}
	return s.open(execID, clusterID+"\x00"+nodeID, deploymentKind, stored)
}

// Sealed reports whether s seals step data at rest (it was returned by
// WithSealer), so a value given to it is never stored in clear.
func Sealed(s Store) bool {
	_, ok := s.(*sealedStore)
	return ok
}
