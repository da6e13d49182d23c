package api

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// Event names of GET /v1/executions/{id}/events.
const (
	EventStatus = "status" // the execution without its steps; first and on every status change
	EventStep   = "step"   // one step whose state changed
	EventDone   = "done"   // the final execution; the stream ends
)

// stepKey is what makes a step event worth sending; the error is kept as
// a hash, so what the stream remembers per step stays small.
type stepKey struct {
	status   model.Status
	action   model.Action
	attempts int
	err      uint64
}

// sseWriter writes server-sent events, keeping the write deadline ahead.
type sseWriter struct {
	c     echo.Context
	rc    *http.ResponseController
	ahead time.Duration
	seq   int
}

func (w *sseWriter) write(chunk string) error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.ahead))
	if _, err := w.c.Response().Write([]byte(chunk)); err != nil {
		return err
	}
	return w.rc.Flush()
}

func (w *sseWriter) event(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.seq++
	return w.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", w.seq, name, data))
}

// executionEvents streams an execution's changes: it polls the progress —
// every page of it, so that the steps beyond the first page of a huge
// execution are followed too — and sends a step event per changed step,
// status events on status changes, a comment as heartbeat, and a done
// event when the execution closes (with the first page of steps; the
// final states of later pages are read from /steps, by the live page). The close is not waited for by polling:
// a long poll on the workflow's result sends the done event as soon as it
// closes, so following a short execution costs its own time, not a poll
// interval. It stops when the client goes away. Cost per poll: a describe,
// plus a describe and a progress query per further page (up to 5,000
// steps or about 1 MiB a page); memory: a small key per step seen.
func (s *server) executionEvents(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	first, err := s.exec.Describe(ctx, id)
	if err != nil {
		return s.executionError(err, id)
	}
	ex := fromStarter(first)

	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
	w := &sseWriter{c: c, rc: http.NewResponseController(c.Response()), ahead: 2*s.cfg.EventsHeartbeat + 10*time.Second}

	seen := map[string]stepKey{}
	seed := maphash.MakeSeed()
	var lastStatus model.ExecutionStatus
	var gone error // a failed write: the client left
	send := func(steps []model.StepProgress) error {
		for _, st := range steps {
			k := stepKey{st.Status, st.Action, st.Attempts, maphash.String(seed, st.Error)}
			if old, ok := seen[st.ID]; ok && old == k {
				continue
			}
			seen[st.ID] = k
			if err := w.event(EventStep, st); err != nil {
				gone = err
				return err
			}
		}
		return nil
	}
	emit := func(ex *model.Execution) error {
		s.present(ex)
		if ex.Status != lastStatus {
			lastStatus = ex.Status
			if err := w.event(EventStatus, withoutSteps(ex)); err != nil {
				return err
			}
		}
		if err := send(ex.Steps); err != nil {
			return err
		}
		// A closed execution's later pages are not read: querying a closed
		// workflow replays it, which would hold the done event up; its
		// final states are at /steps.
		if p := ex.Progress; p != nil && p.Entries > len(ex.Steps) && !ex.Finished() {
			if err := s.laterSteps(ctx, id, len(ex.Steps), p.Entries, send); err != nil {
				if gone != nil || ctx.Err() != nil {
					return err
				}
				// The next poll reads the pages again.
				requestLogger(c, s.log).Warn("events: progress page failed", "execution", id, "error", err)
			}
		}
		if ex.Finished() {
			return w.event(EventDone, ex)
		}
		return nil
	}
	if err := emit(ex); err != nil || ex.Finished() {
		return nil // a failed write means the client left
	}

	closed := make(chan *starter.Execution, 1)
	go func() {
		// Await describes the closed execution; on an error the poll
		// below still sees the close.
		if fin, err := s.exec.Await(ctx, id); err == nil && fin != nil {
			closed <- fin
		}
	}()
	poll := time.NewTicker(s.cfg.EventsPollInterval)
	defer poll.Stop()
	beat := time.NewTicker(s.cfg.EventsHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case fin := <-closed:
			if ex := fromStarter(fin); emit(ex) != nil || ex.Finished() {
				return nil
			}
		case <-beat.C:
			if err := w.write(": heartbeat\n\n"); err != nil {
				return nil
			}
		case <-poll.C:
			next, err := s.exec.Describe(ctx, id)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				// Temporal hiccups are transient; say so and keep polling.
				requestLogger(c, s.log).Warn("events: describe failed", "execution", id, "error", err)
				if err := w.write(": describe failed, retrying\n\n"); err != nil {
					return nil
				}
				continue
			}
			ex := fromStarter(next)
			if err := emit(ex); err != nil || ex.Finished() {
				return nil
			}
		}
	}
}

// withoutSteps is the execution summary sent with status events, so each
// event stays small whatever the number of steps.
func withoutSteps(e *model.Execution) *model.Execution {
	cp := *e
	cp.Steps = []model.StepProgress{}
	cp.Plan = nil
	if e.Progress != nil {
		p := *e.Progress
		p.Waiting = slices.Clone(p.Waiting)
		cp.Progress = &p
	}
	return &cp
}
