package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// DriftSchedules keeps stacks' drift schedules in Temporal (the starter).
type DriftSchedules interface {
	// SetDrift creates or updates the stack's schedule.
	SetDrift(ctx context.Context, stackID string, set model.DriftSettings) error
	// DescribeDrift answers starter.ErrNotFound when the stack has none.
	DescribeDrift(ctx context.Context, stackID string) (*model.Drift, error)
	DeleteDrift(ctx context.Context, stackID string) error
}

// needDrift answers 503 when the server runs without Temporal.
func (s *server) needDrift(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.drift == nil {
			return errNoExecutions()
		}
		return h(c)
	}
}

// putDrift creates or replaces a stack's drift schedule:
// PUT /v1/stacks/{id}/drift {"every": "10m", "repair": false, "watch": false}.
func (s *server) putDrift(c echo.Context) error {
	var in model.DriftSettings
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	return s.setDrift(c, in)
}

// patchDrift changes some settings of an existing drift schedule
// (pausing it: {"paused": true}).
func (s *server) patchDrift(c echo.Context) error {
	var p model.DriftPatch
	if err := decodeJSON(c, &p, false); err != nil {
		return err
	}
	id := c.Param("id")
	cur, err := s.drift.DescribeDrift(c.Request().Context(), id)
	if err != nil {
		return driftError(err, id)
	}
	set := cur.DriftSettings
	if rec, err := s.store.GetDrift(c.Request().Context(), id); err == nil {
		set.Repair, set.Watch = rec.Repair, rec.Watch
	}
	if p.Every != nil {
		set.Every = *p.Every
	}
	if p.Repair != nil {
		set.Repair = *p.Repair
	}
	if p.Paused != nil {
		set.Paused = *p.Paused
	}
	if p.Overlap != nil {
		set.Overlap = *p.Overlap
	}
	if p.Watch != nil {
		set.Watch = *p.Watch
	}
	return s.setDrift(c, set)
}

func (s *server) setDrift(c echo.Context, set model.DriftSettings) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if _, err := s.store.GetStack(ctx, id); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	every, _, err := starter.ParseDriftSettings(set)
	if err != nil {
		return invalid("invalid drift settings", []model.ErrorDetail{{Document: requestSource, Message: err.Error()}})
	}
	set.Every = every.String() // as Temporal will show it

	if err := s.store.PutDriftSettings(ctx, id, set.Repair, set.Watch); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	if err := s.drift.SetDrift(ctx, id, set); err != nil {
		return driftError(err, id)
	}
	s.driftChanged(id)
	return s.answerDrift(c, id, &set)
}

// getDrift shows a stack's drift schedule and its last check.
func (s *server) getDrift(c echo.Context) error {
	id := c.Param("id")
	if _, err := s.store.GetStack(c.Request().Context(), id); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	return s.answerDrift(c, id, nil)
}

// answerDrift shows the stack's schedule and last check. A schedule just
// set answers with the settings given: Temporal applies a pause as a
// signal, which its description may not show yet.
func (s *server) answerDrift(c echo.Context, id string, set *model.DriftSettings) error {
	ctx := c.Request().Context()
	d, err := s.drift.DescribeDrift(ctx, id)
	if err != nil {
		return driftError(err, id)
	}
	if set != nil {
		d.DriftSettings = *set
		if d.Overlap == "" {
			d.Overlap = starter.DefaultOverlap
		}
		if d.Paused {
			d.NextCheckAt = nil
		}
	}
	rec, err := s.store.GetDrift(ctx, id)
	switch {
	case err == nil:
		d.Repair, d.Watch = rec.Repair, rec.Watch
		if d.LastCheck, err = rec.Check(); err != nil {
			return internalError(fmt.Errorf("stack %s: %w", id, err))
		}
	case !errors.Is(err, store.ErrNotFound):
		return storeError(err, "drift record")
	}
	return c.JSON(http.StatusOK, d)
}

// deleteDrift deletes a stack's drift schedule and its record.
func (s *server) deleteDrift(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if err := s.drift.DeleteDrift(ctx, id); err != nil {
		return driftError(err, id)
	}
	if err := s.store.DeleteDrift(ctx, id); err != nil {
		return storeError(err, "drift record")
	}
	s.driftChanged(id)
	return c.NoContent(http.StatusNoContent)
}

// orNoop is f, or a function doing nothing when f is nil.
func orNoop(f func(string)) func(string) {
	if f == nil {
		return func(string) {}
	}
	return f
}

// driftError maps a schedule failure to an answer.
func driftError(err error, stackID string) error {
	switch {
	case errors.Is(err, starter.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("stack %q has no drift schedule", stackID), Cause: err}
	case errors.Is(err, starter.ErrInvalidDrift):
		return invalid("invalid drift settings", []model.ErrorDetail{{Document: requestSource, Message: err.Error()}})
	default:
		return internalError(err)
	}
}
