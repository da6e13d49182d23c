package codec

import (
	"crypto/hmac"
	"crypto/sha256"
)

// Purposes of keys derived from the codec key.
const (
	// PurposeFingerprint keys the fingerprints of file content that holds
	// a secret.
	PurposeFingerprint = "file-fingerprint"
)

// DeriveKey returns a 32-byte key for one purpose, derived from the codec
// key (HMAC-SHA256 of the purpose under it), so the codec key itself is
// used only to seal payloads and every worker holding it derives the same
// key.
func DeriveKey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("cairn/" + purpose))
	return m.Sum(nil)
}
