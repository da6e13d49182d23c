package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/webhook"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// hookResponseLimit bounds what is read of a receiver's answer.
const hookResponseLimit = 64 << 10

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
			if isConfig(err) {
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
// meanwhile gets nothing. Anything but a 2xx answer within webhook.Timeout is
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

// deliver POSTs ev to hook once, signed with its secret. The answer's
// body is read up to hookResponseLimit and dropped; redirects are not
// followed.
func (a *Activities) deliver(ctx context.Context, hook model.Hook, ev model.HookEvent) error {
	if err := webhook.CheckURL(hook.URL); err != nil {
		return configError(err.Error())
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return configError(fmt.Sprintf("hook event: %v", err))
	}
	ctx, cancel := context.WithTimeout(ctx, webhook.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return configError(fmt.Sprintf("hook %s: %v", hook.ID, err))
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cairn-webhook")
	req.Header.Set(webhook.EventHeader, ev.Type)
	req.Header.Set(webhook.DeliveryHeader, ev.ID)
	req.Header.Set(webhook.TimestampHeader, strconv.FormatInt(ts, 10))
	if hook.Secret != "" {
		req.Header.Set(webhook.SignatureHeader, webhook.Sign(hook.Secret, ts, body))
	}
	resp, err := a.hookHTTP.Do(req)
	if errors.Is(err, webhook.ErrAddress) {
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
