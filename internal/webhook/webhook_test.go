package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://ops.example/cairn", true},
		{"http://127.0.0.1:9000/x", true}, // refused when dialled (privateAddr)
		{"file:///etc/passwd", false},
		{"ftp://example.com/", false},
		{"/relative", false},
		{"https://user:pw@example.com/", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			err := CheckURL(tc.url)
			assert.Equal(t, tc.ok, err == nil, "%v", err)
		})
	}
}

func TestSignCoversTimestampAndBody(t *testing.T) {
	body := []byte(`{"type":"drift.detected"}`)
	mac := hmac.New(sha256.New, []byte("k"))
	mac.Write([]byte("1700000000." + string(body)))
	assert.Equal(t, "sha256="+hex.EncodeToString(mac.Sum(nil)), Sign("k", 1700000000, body))
	assert.NotEqual(t, Sign("k", 1700000000, body), Sign("k", 1700000001, body), "the timestamp is not signed")
	assert.NotEqual(t, Sign("k", 1700000000, body), Sign("other", 1700000000, body))
}

func TestPrivateAddresses(t *testing.T) {
	tests := []struct {
		addr    string
		private bool
	}{
		{"127.0.0.1", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"fe80::1", true},
		{"fd00::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"::ffff:127.0.0.1", true},
		{"100.64.0.1", true},
		{"224.0.0.1", true},
		{"93.184.215.14", false},
		{"2606:4700::1111", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			why := privateAddr(netip.MustParseAddr(tc.addr))
			assert.Equal(t, tc.private, why != "", why)
		})
	}
}
