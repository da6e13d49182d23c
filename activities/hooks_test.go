package activities

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckHookURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://ops.example/cairn", true},
		{"http://127.0.0.1:9000/x", true},
		{"file:///etc/passwd", false},
		{"ftp://example.com/", false},
		{"/relative", false},
		{"https://user:pw@example.com/", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			err := CheckHookURL(tc.url)
			assert.Equal(t, tc.ok, err == nil, "%v", err)
		})
	}
}

func TestSignHookCoversTimestampAndBody(t *testing.T) {
	body := []byte(`{"type":"drift.detected"}`)
	mac := hmac.New(sha256.New, []byte("k"))
	mac.Write([]byte("1700000000." + string(body)))
	assert.Equal(t, "sha256="+hex.EncodeToString(mac.Sum(nil)), SignHook("k", 1700000000, body))
	assert.NotEqual(t, SignHook("k", 1700000000, body), SignHook("k", 1700000001, body), "the timestamp is not signed")
	assert.NotEqual(t, SignHook("k", 1700000000, body), SignHook("other", 1700000000, body))
}
