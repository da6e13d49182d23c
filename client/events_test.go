package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
)

// sseServer answers every events request with body, as an event stream.
func sseServer(t *testing.T, body string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "bad request headers", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "tok")
	require.NoError(t, err)
	return c
}

func TestEventsParsing(t *testing.T) {
	stream := ": heartbeat\n\n" +
		"id: 1\nevent: status\ndata: {\"id\": \"e1\", \"status\": \"running\", \"steps\": []}\n\n" +
		": heartbeat\n\n" +
		"id: 2\nevent: step\ndata: {\"id\": \"file/a\", \"status\": \"running\",\ndata:  \"attempts\": 1}\n\n" +
		"id: 3\nevent: step\ndata: {\"id\": \"file/a\", \"status\": \"succeeded\", \"attempts\": 1}\n\n" +
		"id: 4\nevent: done\ndata: {\"id\": \"e1\", \"status\": \"completed\", \"steps\": []}\n\n" +
		"event: step\ndata: {\"id\": \"never/read\"}\n\n"
	c := sseServer(t, stream)
	var got []string
	err := c.Events(context.Background(), "e1", func(ev client.Event) error {
		switch ev.Type {
		case client.EventStep:
			got = append(got, ev.ID+":step:"+ev.Step.ID+":"+string(ev.Step.Status))
		default:
			got = append(got, ev.ID+":"+ev.Type+":"+string(ev.Execution.Status))
		}
		return nil
	})
	require.NoError(t, err)
	want := []string{"1:status:running", "2:step:file/a:running", "3:step:file/a:succeeded", "4:done:completed"}
	require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "events %v, want %v", got, want)
}

func TestEventsEndings(t *testing.T) {
	t.Run("stream ends early", func(t *testing.T) {
		c := sseServer(t, "event: status\ndata: {\"id\": \"e1\", \"status\": \"running\"}\n\n")
		err := c.Events(context.Background(), "e1", func(client.Event) error { return nil })
		require.ErrorIs(t, err, client.ErrStreamEnded, "err %v", err)
	})
	t.Run("callback stops", func(t *testing.T) {
		c := sseServer(t, "event: step\ndata: {\"id\": \"a\"}\n\nevent: step\ndata: {\"id\": \"b\"}\n\n")
		stop := errors.New("enough")
		n := 0
		err := c.Events(context.Background(), "e1", func(client.Event) error { n++; return stop })
		require.ErrorIs(t, err, stop, "err %v after %d events", err, n)
		require.Equal(t, 1, n, "err %v after %d events", err, n)
	})
	t.Run("bad data", func(t *testing.T) {
		c := sseServer(t, "event: step\ndata: {not json\n\n")
		require.Error(t, c.Events(context.Background(), "e1", func(client.Event) error { return nil }), "bad event data accepted")
	})
}
