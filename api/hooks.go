package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Bounds of a stack's webhooks.
const (
	maxHooks          = 20
	maxHookSecret     = 1024
	maxHookURL        = 2048
	hookFingerprintLn = 16
)

// hookViews shows hooks with their secrets' fingerprints only.
func hookViews(hooks []model.Hook) model.HookViews {
	out := model.HookViews{Hooks: make([]model.HookView, 0, len(hooks))}
	for _, h := range hooks {
		v := model.HookView{ID: h.ID, URL: h.URL, Events: h.Events, DryRuns: h.DryRuns}
		if h.Secret != "" {
			sum := sha256.Sum256([]byte(h.Secret))
			v.SecretFingerprint = hex.EncodeToString(sum[:])[:hookFingerprintLn]
		}
		out.Hooks = append(out.Hooks, v)
	}
	return out
}

// checkHooks lists what is wrong with a hooks list, by path.
func (s *server) checkHooks(hooks []model.Hook) []ErrorDetail {
	var details []ErrorDetail
	add := func(path, format string, args ...any) {
		details = append(details, ErrorDetail{Document: requestSource, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(hooks) > maxHooks {
		add("hooks", "%d hooks: at most %d per stack", len(hooks), maxHooks)
	}
	for i, h := range hooks {
		at := fmt.Sprintf("hooks[%d]", i)
		if len(h.URL) > maxHookURL {
			add(at+".url", "longer than %d bytes", maxHookURL)
		} else if err := activities.CheckHookURL(h.URL); err != nil {
			add(at+".url", "%v", err)
		}
		if len(h.Events) == 0 {
			add(at+".events", "no events: want some of %s", strings.Join(model.HookEvents, ", "))
		}
		for j, e := range h.Events {
			if !slices.Contains(model.HookEvents, e) {
				add(fmt.Sprintf("%s.events[%d]", at, j), "unknown event %q: want one of %s", e, strings.Join(model.HookEvents, ", "))
			}
		}
		if len(h.Secret) > maxHookSecret {
			add(at+".secret", "longer than %d bytes", maxHookSecret)
		}
		if h.Secret != "" && !store.Sealed(s.store) {
			add(at+".secret", "this server keeps no secrets: it has no CAIRN_CODEC_KEY to seal them with; set one to sign deliveries")
		}
	}
	return details
}

// putHooks replaces a stack's webhooks.
func (s *server) putHooks(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	var in model.Hooks
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	if _, err := s.store.GetStack(ctx, id); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	if details := s.checkHooks(in.Hooks); len(details) > 0 {
		return invalid("invalid hooks", details)
	}
	for i := range in.Hooks {
		in.Hooks[i].ID = uuid.NewString()[:8]
	}
	if err := store.PutHooks(ctx, s.store, id, in.Hooks); err != nil {
		return storeError(err, "hooks")
	}
	return c.JSON(http.StatusOK, hookViews(in.Hooks))
}

// getHooks lists a stack's webhooks, without their secrets.
func (s *server) getHooks(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if _, err := s.store.GetStack(ctx, id); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	hooks, err := store.Hooks(ctx, s.store, id)
	if err != nil {
		return storeError(err, "hooks")
	}
	return c.JSON(http.StatusOK, hookViews(hooks))
}

// deleteHooks removes every webhook of a stack.
func (s *server) deleteHooks(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if _, err := s.store.GetStack(ctx, id); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	if err := store.PutHooks(ctx, s.store, id, nil); err != nil {
		return storeError(err, "hooks")
	}
	return c.NoContent(http.StatusNoContent)
}
