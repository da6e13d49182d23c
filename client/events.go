package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-io/cairn/model"
)

// Event names of an execution's event stream.
const (
	EventStatus = "status"
	EventStep   = "step"
	EventDone   = "done"
)

// Event is one server-sent event of an execution: Execution is set for
// status and done events, Step for step events.
type Event struct {
	ID        string
	Type      string
	Execution *model.Execution
	Step      *model.StepProgress
}

// ErrStreamEnded is returned when the stream closes before its done event.
var ErrStreamEnded = errors.New("event stream ended before the execution finished")

// Events follows an execution: fn is called for every event, in order,
// until the done event (Events then returns nil), fn returns an error
// (returned as is), ctx ends, or the stream breaks. The first events are
// every step's latest state and the status, then each change.
func (c *Client) Events(ctx context.Context, id string, fn func(Event) error) error {
	return c.EventsAfter(ctx, id, "", fn)
}

// EventsAfter follows an execution as Events does, from after the event
// whose ID is lastID (sent as Last-Event-ID): when the server still
// follows the execution for other clients it sends only what changed
// since; otherwise every step's latest state again.
func (c *Client) EventsAfter(ctx context.Context, id, lastID string, fn func(Event) error) error {
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/v1/executions/" + esc(id) + "/events", accept: "text/event-stream",
		lastEventID: lastID})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev Event
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Type == "" && data.Len() == 0 {
				continue // a comment block (heartbeat)
			}
			if err := decodeEvent(&ev, data.String()); err != nil {
				return err
			}
			if err := fn(ev); err != nil {
				return err
			}
			if ev.Type == EventDone {
				return nil
			}
			ev, data = Event{}, strings.Builder{}
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Type = value
			case "id":
				ev.ID = value
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(value)
			}
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("events of %s: %w", id, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return ErrStreamEnded
}

func decodeEvent(ev *Event, data string) error {
	if ev.Type == "" {
		ev.Type = "message"
	}
	switch ev.Type {
	case EventStep:
		var st model.StepProgress
		if err := json.Unmarshal([]byte(data), &st); err != nil {
			return fmt.Errorf("step event: %w", err)
		}
		ev.Step = &st
	case EventStatus, EventDone:
		var ex model.Execution
		if err := json.Unmarshal([]byte(data), &ex); err != nil {
			return fmt.Errorf("%s event: %w", ev.Type, err)
		}
		ev.Execution = &ex
	}
	return nil
}

// Wait polls an execution every interval until it finishes.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (*model.Execution, error) {
	return c.WaitFor(ctx, id, interval, (*model.Execution).Finished)
}

// WaitFor polls an execution every interval until cond holds (or ctx
// ends) and returns it.
func (c *Client) WaitFor(ctx context.Context, id string, interval time.Duration, cond func(*model.Execution) bool) (*model.Execution, error) {
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ex, err := c.GetExecution(ctx, id)
		if err != nil {
			return nil, err
		}
		if cond(ex) {
			return ex, nil
		}
		select {
		case <-ctx.Done():
			return ex, ctx.Err()
		case <-t.C:
		}
	}
}
