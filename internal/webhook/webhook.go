// Package webhook holds what both ends of Cairn's webhooks agree on: which
// URLs a hook may have (the API checks them when a hook is set, the
// delivery again before sending), how a delivery is signed, and the HTTP
// client deliveries go through, which refuses the control plane's own
// network. Delivering is an activity's work; this package sends nothing.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Delivery headers. The signature is HMAC-SHA256, keyed with the hook's
// secret, over "<timestamp>.<body>": a receiver recomputes it and refuses
// a timestamp too far from its clock, so a captured delivery cannot be
// replayed later.
const (
	SignatureHeader = "X-Cairn-Signature" // "sha256=<hex>"
	TimestampHeader = "X-Cairn-Timestamp" // Unix seconds
	EventHeader     = "X-Cairn-Event"     // the event type
	DeliveryHeader  = "X-Cairn-Delivery"  // the event id
)

// Timeout bounds one delivery attempt: connecting, the TLS handshake and
// the whole exchange.
const Timeout = 10 * time.Second

// Sign is the SignatureHeader value of body sent at timestamp (Unix
// seconds) to a hook with secret.
func Sign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// CheckURL accepts absolute http and https URLs with a host and without
// credentials only. The address the host resolves to is checked when a
// delivery connects (see NewClient), not here.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("hook URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("hook URL %q: only absolute http(s) URLs are allowed", raw)
	}
	if u.User != nil {
		return fmt.Errorf("hook URL %q: credentials in the URL are not allowed; use the hook's secret", u.Redacted())
	}
	return nil
}
