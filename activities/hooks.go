package activities

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"go.temporal.io/sdk/temporal"
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

// errHookAddress marks a delivery refused for its receiver's address.
var errHookAddress = errors.New("webhook address refused")

// WantsHooks says whether any of the stack's hooks wants the event: one
// store read, run as a local activity so an execution of a stack without
// hooks starts no delivery at all.
func (a *Activities) WantsHooks(ctx context.Context, in contract.DeliverHooksInput) (bool, error) {
	hooks, err := store.Hooks(ctx, a.d.Store, in.Event.StackID)
	if err != nil {
		return false, err
	}
	for _, h := range hooks {
		if h.Wants(in.Event.Type, in.DryRun) {
			return true, nil
		}
	}
	return false, nil
}

// DeliverHooks sends an event to each of the stack's hooks that wants it,
// all at once, each tried once, and names those that failed for the
// caller to retry one by one (DeliverHook). Hooks and secrets are read
// from the store (one read), never from the input. A hook refused for its
// URL or address is not retried.
func (a *Activities) DeliverHooks(ctx context.Context, in contract.DeliverHooksInput) (*contract.DeliverHooksResult, error) {
	hooks, err := store.Hooks(ctx, a.d.Store, in.Event.StackID)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	out := &contract.DeliverHooksResult{Failed: []string{}}
	for _, h := range hooks {
		if !h.Wants(in.Event.Type, in.DryRun) {
			continue
		}
		wg.Go(func() {
			err := a.deliver(ctx, h, in.Event)
			if err == nil {
				return
			}
			a.log.Warn("hook not reached", "stack", in.Event.StackID, "hook", h.ID, "event", in.Event.ID, "error", err)
			if isConfigError(err) {
				return
			}
			mu.Lock()
			out.Failed = append(out.Failed, h.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(out.Failed)
	return out, nil
}

// DeliverHook POSTs an event to one hook of a stack, signed with the
// hook's secret read from the store (never from the input). A hook removed
// meanwhile gets nothing. Anything but a 2xx answer within hookTimeout is
// an error Temporal retries; a URL or address refused is not.
func (a *Activities) DeliverHook(ctx context.Context, in contract.DeliverHookInput) error {
	hooks, err := store.Hooks(ctx, a.d.Store, in.Event.StackID)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if h.ID == in.HookID {
			return a.deliver(ctx, h, in.Event)
		}
	}
	a.log.Info("hook gone before delivery", "stack", in.Event.StackID, "hook", in.HookID, "event", in.Event.ID)
	return nil
}

// isConfigError reports whether err is one no retry can fix.
func isConfigError(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == contract.ConfigErrorType
}

// deliver POSTs ev to hook once, signed with its secret. The answer's
// body is read up to hookResponseLimit and dropped; redirects are not
// followed.
func (a *Activities) deliver(ctx context.Context, hook model.Hook, ev model.HookEvent) error {
	if err := CheckHookURL(hook.URL); err != nil {
		return configError(err.Error())
	}
	body, err := json.Marshal(ev)
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
	req.Header.Set(HookEventHeader, ev.Type)
	req.Header.Set(HookDeliveryHeader, ev.ID)
	req.Header.Set(HookTimestampHeader, strconv.FormatInt(ts, 10))
	if hook.Secret != "" {
		req.Header.Set(HookSignatureHeader, SignHook(hook.Secret, ts, body))
	}
	resp, err := a.hookHTTP.Do(req)
	if errors.Is(err, errHookAddress) {
		return configError(fmt.Sprintf("deliver %s to hook %s: %v", ev.Type, hook.ID, err))
	}
	if err != nil {
		return fmt.Errorf("deliver %s to hook %s: %w", ev.Type, hook.ID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, hookResponseLimit))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("deliver %s to hook %s: answered %s", ev.Type, hook.ID, resp.Status)
	}
	return nil
}
