package activities

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Webhook delivery headers. The signature is HMAC-SHA256, keyed with the
// hook's secret, over "<timestamp>.<body>": a receiver recomputes it and
// refuses a timestamp too far from its clock, so a captured delivery
// cannot be replayed later.
const (
	HookSignatureHeader = "X-Cairn-Signature" // "sha256=<hex>"
	HookTimestampHeader = "X-Cairn-Timestamp" // Unix seconds
	HookEventHeader     = "X-Cairn-Event"     // the event type
	HookDeliveryHeader  = "X-Cairn-Delivery"  // the event id
)

// Bounds of one delivery attempt.
const (
	hookTimeout       = 10 * time.Second
	hookResponseLimit = 64 << 10
)

// SignHook is the X-Cairn-Signature value of body sent at timestamp (Unix
// seconds) to a hook with secret.
func SignHook(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// CheckHookURL accepts absolute http and https URLs with a host only.
func CheckHookURL(raw string) error {
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

// MatchHooks names the stack's hooks that want an event. One store read.
func (a *Activities) MatchHooks(ctx context.Context, in contract.MatchHooksInput) (*contract.MatchHooksResult, error) {
	hooks, err := store.Hooks(ctx, a.d.Store, in.StackID)
	if err != nil {
		return nil, err
	}
	out := &contract.MatchHooksResult{HookIDs: []string{}}
	for _, h := range hooks {
		if h.Wants(in.Type, in.DryRun) {
			out.HookIDs = append(out.HookIDs, h.ID)
		}
	}
	return out, nil
}

// DeliverHook POSTs an event to one hook of a stack, signed with the
// hook's secret read from the store (never from the input). A hook removed
// meanwhile gets nothing. Anything but a 2xx answer within hookTimeout is
// an error Temporal retries; the answer's body is read up to
// hookResponseLimit and dropped. Redirects are not followed.
func (a *Activities) DeliverHook(ctx context.Context, in contract.DeliverHookInput) error {
	hooks, err := store.Hooks(ctx, a.d.Store, in.StackID)
	if err != nil {
		return err
	}
	var hook *model.Hook
	for i := range hooks {
		if hooks[i].ID == in.HookID {
			hook = &hooks[i]
		}
	}
	if hook == nil {
		a.log.Info("hook gone before delivery", "stack", in.StackID, "hook", in.HookID, "event", in.Event.ID)
		return nil
	}
	if err := CheckHookURL(hook.URL); err != nil {
		return configError(err.Error())
	}
	body, err := json.Marshal(in.Event)
	if err != nil {
		return configError(fmt.Sprintf("hook event: %v", err))
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return configError(fmt.Sprintf("hook %s: %v", hook.ID, err))
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cairn-webhook")
	req.Header.Set(HookEventHeader, in.Event.Type)
	req.Header.Set(HookDeliveryHeader, in.Event.ID)
	req.Header.Set(HookTimestampHeader, strconv.FormatInt(ts, 10))
	if hook.Secret != "" {
		req.Header.Set(HookSignatureHeader, SignHook(hook.Secret, ts, body))
	}
	resp, err := a.hookHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("deliver %s to hook %s: %w", in.Event.Type, hook.ID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, hookResponseLimit))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("deliver %s to hook %s: answered %s", in.Event.Type, hook.ID, resp.Status)
	}
	return nil
}

// newHookClient is the HTTP client of deliveries: no redirects, a bound
// on each attempt.
func newHookClient() *http.Client {
	return &http.Client{
		Timeout:       hookTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
