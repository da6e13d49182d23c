package api

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// Event names of GET /v1/executions/{id}/events.
const (
	EventStatus = "status" // the execution without its steps; first and on every status change
	EventStep   = "step"   // one step whose state changed
	EventDone   = "done"   // the final execution; the stream ends
)

// sseWriter writes server-sent events, keeping the write deadline ahead.
type sseWriter struct {
	c     echo.Context
	rc    *http.ResponseController
	ahead time.Duration
}

func (w *sseWriter) write(chunk string) error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.ahead))
	if _, err := w.c.Response().Write([]byte(chunk)); err != nil {
		return err
	}
	return w.rc.Flush()
}

// raw writes one event whose data is JSON (one line), unflushed.
func (w *sseWriter) raw(id, name string, data []byte) error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.ahead))
	_, err := fmt.Fprintf(w.c.Response(), "id: %s\nevent: %s\ndata: %s\n\n", id, name, data)
	return err
}

func (w *sseWriter) flush() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.ahead))
	return w.rc.Flush()
}

// executionEvents streams an execution's changes from its follower (see
// hub.go), shared with every other client of the execution: first the
// latest state of every step and the status, as the follower has them,
// then each change as the follower reads it, a comment as heartbeat, and
// a done event when the execution closes. Each event has an id; a client
// that reconnects with it in Last-Event-ID, while the follower still
// follows for others, resumes after it instead of reading every step
// again. A stream refused because too many executions are followed
// answers 503, one refused because too many clients follow this one 429,
// both with Retry-After. Cost to the server: no Temporal call of its own
// (but the first client's, which starts the follower); a position and a
// batch of at most 256 events being written.
func (s *server) executionEvents(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	f, err := s.hub.join(id)
	if err != nil {
		c.Response().Header().Set("Retry-After", "5")
		return joinError(err)
	}
	defer s.hub.leave(f)
	select {
	case <-f.ready:
	case <-ctx.Done():
		return nil
	}
	if f.err != nil {
		return s.executionError(f.err, id)
	}

	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
	w := &sseWriter{c: c, rc: http.NewResponseController(c.Response()), ahead: 2*s.cfg.EventsHeartbeat + 10*time.Second}

	pos := f.resume(c.Request().Header.Get("Last-Event-ID"))
	beat := time.NewTicker(s.cfg.EventsHeartbeat)
	defer beat.Stop()
	batch := make([]logEvent, 0, sendBatch)
	for {
		var done []byte
		var changed <-chan struct{}
		batch, pos, done, changed = f.next(pos, batch[:0])
		for _, ev := range batch {
			if err := w.raw(f.eventID(ev.seq), ev.name, ev.data); err != nil {
				return nil // the client left
			}
		}
		if len(batch) > 0 {
			if err := w.flush(); err != nil {
				return nil
			}
		}
		clear(batch) // hold no event data while waiting
		if len(batch) == sendBatch {
			continue
		}
		if done != nil {
			_ = w.raw(f.eventID(pos), EventDone, done)
			_ = w.flush()
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-beat.C:
			if err := w.write(": heartbeat\n\n"); err != nil {
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
