package api

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// getSettings answers a cluster's settings ({} when none).
func (s *server) getSettings(c echo.Context) error {
	id := c.Param("id")
	cl, err := s.store.GetCluster(c.Request().Context(), id)
	if err != nil {
		return storeError(err, fmt.Sprintf("cluster %q", id))
	}
	return c.JSON(http.StatusOK, model.SettingsDocument{Settings: orEmpty(cl.Settings)})
}

// putSettings replaces a cluster's settings whole with the body
// {"settings": {...}}.
func (s *server) putSettings(c echo.Context) error {
	var in model.SettingsDocument
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	if in.Settings == nil {
		return invalid("invalid settings", []model.ErrorDetail{{Document: requestSource, Path: "settings", Message: "settings must be an object"}})
	}
	if details := checkSettings(in.Settings, "settings"); len(details) > 0 {
		return invalid("invalid settings", details)
	}
	return s.updateSettings(c, func(map[string]any) (map[string]any, error) { return in.Settings, nil })
}

// patchSettings applies a JSON merge patch (RFC 7386) to a cluster's
// settings: an object merges key by key, null removes a key, anything else
// replaces the value. The body is the patch itself.
func (s *server) patchSettings(c echo.Context) error {
	var patch map[string]any
	if err := decodeJSON(c, &patch, false); err != nil {
		return err
	}
	if patch == nil {
		return invalid("invalid settings patch", []model.ErrorDetail{{Document: requestSource, Message: "a settings patch must be an object"}})
	}
	if details := checkSettings(patch, ""); len(details) > 0 {
		return invalid("invalid settings patch", details)
	}
	return s.updateSettings(c, func(current map[string]any) (map[string]any, error) {
		merged, _ := mergePatch(current, patch).(map[string]any)
		return merged, nil
	})
}

func (s *server) updateSettings(c echo.Context, fn func(map[string]any) (map[string]any, error)) error {
	id := c.Param("id")
	out, err := s.store.UpdateClusterSettings(c.Request().Context(), id, fn)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("cluster %q not found", id)
	}
	if err != nil {
		return storeError(err, fmt.Sprintf("settings of cluster %q", id))
	}
	return c.JSON(http.StatusOK, model.SettingsDocument{Settings: orEmpty(out)})
}

// mergePatch applies an RFC 7386 merge patch to target and returns the
// result; target is not modified. Cost: linear in the patch.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// checkSettings refuses keys the store reserves (a "$cairn" prefix marks
// sealed values) and empty keys, at any depth.
func checkSettings(m map[string]any, path string) []model.ErrorDetail {
	var details []model.ErrorDetail
	_ = nested.Walk(m, path, func(p nested.Path, v any) error {
		sub, ok := v.(map[string]any)
		if !ok {
			return nested.SkipChildren // a list is a value: its items hold no settings keys
		}
		here := p.String()
		for _, k := range slices.Sorted(maps.Keys(sub)) {
			switch {
			case k == "":
				details = append(details, model.ErrorDetail{Document: requestSource, Path: here, Message: "a settings key cannot be empty"})
			case strings.HasPrefix(k, "$cairn"):
				details = append(details, model.ErrorDetail{Document: requestSource, Path: nested.Key(here, k), Message: fmt.Sprintf("keys starting with %q are reserved", "$cairn")})
			}
		}
		return nil
	})
	return details
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
