package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/internal/webhook"
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

// hookIDPattern is what a hook id given by the client looks like.
var hookIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// assignHookIDs gives each hook of a new list its id: the one the client
// gave, else that of the old hook with the same URL (each old id once), else
// a new one. A PUT that keeps a hook's URL keeps its id.
func assignHookIDs(old, hooks []model.Hook) {
	taken := map[string]bool{}
	for _, h := range hooks {
		taken[h.ID] = h.ID != ""
	}
	for i := range hooks {
		if hooks[i].ID != "" {
			continue
		}
		for _, o := range old {
			if o.URL == hooks[i].URL && !taken[o.ID] {
				hooks[i].ID = o.ID
				break
			}
		}
		for hooks[i].ID == "" || taken[hooks[i].ID] {
			hooks[i].ID = uuid.NewString()[:8]
		}
		taken[hooks[i].ID] = true
	}
}

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
func (s *server) checkHooks(hooks []model.Hook) []model.ErrorDetail {
	var details []model.ErrorDetail
	add := func(path, format string, args ...any) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(hooks) > maxHooks {
		add("hooks", "%d hooks: at most %d per stack", len(hooks), maxHooks)
	}
	seen := map[string]bool{}
	for i, h := range hooks {
		at := fmt.Sprintf("hooks[%d]", i)
		if len(h.URL) > maxHookURL {
			add(at+".url", "longer than %d bytes", maxHookURL)
		} else if err := webhook.CheckURL(h.URL); err != nil {
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
		if h.ID != "" && !hookIDPattern.MatchString(h.ID) {
			add(at+".id", "%q: want 1 to 32 lower-case letters, digits and dashes, starting with a letter or digit", h.ID)
		} else if h.ID != "" && seen[h.ID] {
			add(at+".id", "%q is given twice", h.ID)
		}
		seen[h.ID] = true
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
	old, err := store.Hooks(ctx, s.store, id)
	if err != nil {
		return storeError(err, "hooks")
	}
	assignHookIDs(old, in.Hooks)
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
