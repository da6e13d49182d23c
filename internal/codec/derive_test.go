package codec

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDeriveKey(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	a := DeriveKey(key, PurposeFingerprint)
	assert.Len(t, a, 32)
	assert.Equal(t, a, DeriveKey(bytes.Clone(key), PurposeFingerprint), "every holder of the key derives the same")
	assert.NotEqual(t, a, DeriveKey(key, "other"), "one key per purpose")
	assert.NotEqual(t, a, DeriveKey(bytes.Repeat([]byte{8}, KeySize), PurposeFingerprint))
	assert.NotEqual(t, key, a, "the codec key itself is not reused")
}
