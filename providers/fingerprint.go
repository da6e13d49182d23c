package providers

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// Content fingerprints. A file's bytes are shown, compared and recorded
// as a digest, never as bytes. A plain sha256 of bytes that hold a secret
// can be brute-forced from the digest (a password is short, the rest of
// the file is known from the package), so bytes holding a secret value
// are fingerprinted with a keyed hash instead: HMAC-SHA256 under a key the
// workers hold and nobody who reads plans, history or the store does.
const (
	// plainDigestPrefix marks a sha256 of bytes that hold no secret.
	plainDigestPrefix = "{sha256}"
	// keyedDigestPrefix marks an HMAC-SHA256 of bytes that hold a secret.
	keyedDigestPrefix = "{hmac-sha256}"
	// FingerprintKeySize is the size of a fingerprint key.
	FingerprintKeySize = 32
)

// newFingerprintKey is a random key, for a registry not given one.
func newFingerprintKey() []byte {
	key := make([]byte, FingerprintKeySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return key
}

// digest is the plain fingerprint of bytes that hold no secret.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return plainDigestPrefix + hex.EncodeToString(sum[:])
}

// keyedDigest is the fingerprint of bytes that hold a secret.
func keyedDigest(key, b []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return keyedDigestPrefix + hex.EncodeToString(m.Sum(nil))
}

// fingerprinter fingerprints the bytes of one object: keyed when the
// content it is compared with holds a secret value of its spec, plain
// otherwise. The same choice serves the current bytes and the desired
// ones, so the two compare.
type fingerprinter struct {
	key   []byte
	keyed bool
}

// contentFingerprinter chooses how content (the desired bytes, "" when
// none are given) and the bytes compared with it are fingerprinted in env.
func contentFingerprinter(env Env, content string) fingerprinter {
	f := fingerprinter{key: env.fingerprintKey}
	for _, s := range env.Secrets {
		if s != "" && bytes.Contains([]byte(content), []byte(s)) {
			f.keyed = true
			break
		}
	}
	if f.keyed && len(f.key) == 0 {
		f.key = newFingerprintKey() // no registry key: keyed, never plain
	}
	return f
}

func (f fingerprinter) sum(b []byte) string {
	if f.keyed {
		return keyedDigest(f.key, b)
	}
	return digest(b)
}
