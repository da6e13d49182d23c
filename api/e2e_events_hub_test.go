package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// metric reads one series of the API's /metrics (its full name with
// labels, as the text format writes it).
func (h *cairn) metric(series string) float64 {
	h.t.Helper()
	raw, err := h.client.Metrics(ctxTimeout(h.t, 30*time.Second))
	require.NoError(h.t, err)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			require.NoError(h.t, err, "%s", sc.Text())
			return n
		}
	}
	h.t.Fatalf("/metrics has no %s:\n%s", series, raw)
	return 0
}

// kept is what the event streams' followers hold, from /metrics.
func (h *cairn) kept() hubStats {
	h.t.Helper()
	return hubStats{
		Followed: int(h.metric("cairn_events_followed_executions")), Clients: int(h.metric("cairn_events_clients")),
		Keys: int(h.metric("cairn_events_kept_events")), Bytes: int(h.metric("cairn_events_kept_bytes")),
	}
}

// window is what the followers did between two readings of /metrics.
type window struct {
	queries, reads float64
	elapsed        time.Duration
}

// measure waits for the followers to read the changes n more times and
// says how many progress queries that took.
func (h *cairn) measure(n float64) window {
	h.t.Helper()
	q0, r0, start := h.metric("cairn_progress_queries_total"), h.metric("cairn_events_reads_total"), time.Now()
	var r1 float64
	waitUntil(h.t, "the followers' reads", func() bool {
		r1 = h.metric("cairn_events_reads_total")
		return r1 >= r0+n
	})
	return window{queries: h.metric("cairn_progress_queries_total") - q0, reads: r1 - r0, elapsed: time.Since(start)}
}

func (w window) perSecond() float64 { return w.queries / w.elapsed.Seconds() }

// watcher follows an execution's events as a client does and keeps each
// step's latest status.
type watcher struct {
	mu     sync.Mutex
	steps  map[string]model.Status
	events int
	lastID string
	done   *model.Execution
	err    error
	ended  chan struct{}
}

func (w *watcher) take(ev client.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if ev.ID != "" {
		w.lastID = ev.ID
	}
	switch ev.Type {
	case client.EventStep:
		w.steps[ev.Step.ID] = ev.Step.Status
	case client.EventDone:
		w.done = ev.Execution
	}
}

// watch follows id's events with c until the done event or ctx ends.
func watch(ctx context.Context, c *client.Client, id, lastID string) *watcher {
	w := &watcher{steps: map[string]model.Status{}, ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		err := c.EventsAfter(ctx, id, lastID, func(ev client.Event) error { w.take(ev); return nil })
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}()
	return w
}

// count is how many steps w has seen in status want ("" any).
func (w *watcher) count(want model.Status) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if want == "" {
		return len(w.steps)
	}
	n := 0
	for _, s := range w.steps {
		if s == want {
			n++
		}
	}
	return n
}

// readSSE parses an event stream into w until it ends.
func readSSE(r io.Reader, w *watcher) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev client.Event
	var data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && ev.Type != "":
			switch ev.Type {
			case client.EventStep:
				ev.Step = &model.StepProgress{}
				if err := json.Unmarshal([]byte(data), ev.Step); err != nil {
					return err
				}
			case client.EventDone, client.EventStatus:
				ev.Execution = &model.Execution{}
				if err := json.Unmarshal([]byte(data), ev.Execution); err != nil {
					return err
				}
			}
			w.take(ev)
			if ev.Type == client.EventDone {
				return nil
			}
			ev, data = client.Event{}, ""
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
	return sc.Err()
}

// openUnread opens id's event stream on a connection with a 4 KiB
// receive buffer and does not read it: a client that falls behind. The
// connection comes with it, to give it a larger buffer before reading.
func (h *cairn) openUnread(ctx context.Context, id string) (*http.Response, *net.TCPConn) {
	h.t.Helper()
	var tcp *net.TCPConn
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			tcp = conn.(*net.TCPConn)
			_ = tcp.SetReadBuffer(4 << 10)
		}
		return conn, err
	}}
	h.t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url+"/v1/executions/"+id+"/events", nil)
	require.NoError(h.t, err)
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, resp.StatusCode)
	h.t.Cleanup(func() { resp.Body.Close() })
	return resp, tcp
}

// TestE2EEventsShareOneFollower follows a running execution of 10,000
// steps (a gate holds all but one) with one event-stream client, then
// with twenty, one of which does not read: each read of the changes
// costs one progress query however many clients there are, the server
// keeps one copy of the steps, every client starts with every step's
// state, a poll after nothing changed returns no step, the clients that
// read get every step's final state while the one that does not holds
// nothing up, and it too gets every final state once it reads.
func TestE2EEventsShareOneFollower(t *testing.T) {
	const steps, clients = 10000, 20
	h := newCairn(t, cairnOptions{cfg: func(c *Config) {
		c.EventsPollInterval = 100 * time.Millisecond
		c.EventsHeartbeat = time.Minute // the unread client is not dropped
	}})
	ctx := ctxTimeout(t, 5*time.Minute)
	dir := t.TempDir()
	flag := filepath.Join(dir, "open")
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "followed"})
	require.NoError(t, err)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(gatedPackage(dir, steps, flag)), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	waitUntil(t, "the gate runs", func() bool {
		p, err := h.client.Steps(ctx, ex.ID, 0, 1)
		return err == nil && len(p.Steps) == 1 && p.Steps[0].Status == model.StatusRunning
	})

	// One client: every step's state first.
	first := watch(ctx, h.client, ex.ID, "")
	waitUntil(t, "the first client's steps", func() bool { return first.count("") == steps })
	assert.Equal(t, 1, first.count(model.StatusRunning))
	one := h.measure(10)
	keptOne := h.kept()

	// Twenty, one of them reading nothing.
	unread, unreadConn := h.openUnread(ctx, ex.ID)
	before := h.measure(0)
	more := []*watcher{first}
	for range clients - 2 {
		more = append(more, watch(ctx, h.client, ex.ID, ""))
	}
	for _, w := range more {
		waitUntil(t, "every client's steps", func() bool { return w.count("") == steps })
	}
	joined := h.measure(0)
	twenty := h.measure(10)
	kept := h.kept()
	assert.Equal(t, 1, kept.Followed)
	assert.Equal(t, clients, kept.Clients)

	// A read of changes is one progress query (a describe besides), with
	// one client or twenty; twenty clients joining cost no query of their
	// own; the server keeps the steps once.
	for name, w := range map[string]window{"one client": one, "twenty clients": twenty} {
		assert.InDelta(t, w.reads, w.queries, 1, "%s: %+v", name, w)
	}
	assert.InDelta(t, joined.reads+before.reads, joined.queries+before.queries, 2, "joining")
	assert.Equal(t, steps+1, keptOne.Keys, "every step and the status, once")
	assert.Equal(t, keptOne.Keys, kept.Keys)
	assert.Equal(t, keptOne.Bytes, kept.Bytes)
	t.Logf("%d steps: 1 client: %.1f progress queries/s (%v reads); %d clients: %.1f queries/s (%v reads); kept %d bytes, %d a step",
		steps, one.perSecond(), one.reads, clients, twenty.perSecond(), twenty.reads, kept.Bytes, kept.Bytes/kept.Keys)

	// A poll after nothing changed returns no step.
	cursor := ""
	for more := true; more; {
		p, err := h.client.StepsSince(ctx, ex.ID, cursor, 0)
		require.NoError(t, err)
		cursor, more = p.Cursor, p.More
	}
	idle, err := h.client.StepsSince(ctx, ex.ID, cursor, 0)
	require.NoError(t, err)
	assert.Empty(t, idle.Steps)
	assert.Equal(t, model.ExecRunning, idle.Status)
	assert.Equal(t, steps, idle.Total)
	assert.Equal(t, cursor, idle.Cursor)

	// The gate opens: every client that reads gets every final state,
	// while the unread one holds nobody up and costs no memory of its own.
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	for _, w := range more {
		<-w.ended
		require.NoError(t, w.err)
		require.NotNil(t, w.done)
		assert.Equal(t, model.ExecCompleted, w.done.Status)
		assert.Equal(t, steps, w.count(model.StatusSucceeded), "every step's final state")
	}
	stalled := h.kept()
	assert.Equal(t, 1, stalled.Clients, "the unread client is still there")
	assert.Equal(t, steps+1, stalled.Keys, "one event a step however far a client is behind")
	assert.LessOrEqual(t, stalled.Bytes, 1024*stalled.Keys, "every step's final event, once")

	require.NoError(t, unreadConn.SetReadBuffer(4<<20))
	late := &watcher{steps: map[string]model.Status{}}
	require.NoError(t, readSSE(unread.Body, late))
	require.NotNil(t, late.done, "the unread client's stream ends with done")
	assert.Equal(t, steps, late.count(model.StatusSucceeded), "the unread client gets every final state")
	t.Logf("the unread client read %d events; a reading one %d", late.events, more[1].events)
	waitUntil(t, "the follower stops with its last client", func() bool { return h.kept().Followed == 0 })
}

// TestE2EEventsLimitsAndResume bounds the followed executions (503) and
// the clients of one (429); a client that reconnects with the last event
// id it saw, while another keeps the follower, reads only what changed
// since; /steps?since refuses a cursor it did not give.
func TestE2EEventsLimitsAndResume(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.EventsMaxExecutions = 1; c.EventsMaxClients = 2 }})
	ctx := ctxTimeout(t, 3*time.Minute)
	dir := t.TempDir()
	start := func(name string, flag string) *model.Execution {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: name})
		require.NoError(t, err)
		ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(gatedPackage(t.TempDir(), 4, flag)), Format: "yaml"}, client.ApplyOptions{})
		require.NoError(t, err)
		waitUntil(t, name+"'s gate runs", func() bool {
			p, err := h.client.Steps(ctx, ex.ID, 0, 1)
			return err == nil && len(p.Steps) == 1 && p.Steps[0].Status == model.StatusRunning
		})
		return ex
	}
	flag1, flag2 := filepath.Join(dir, "open1"), filepath.Join(dir, "open2")
	ex1, ex2 := start("limits-1", flag1), start("limits-2", flag2)

	keeper := watch(ctx, h.client, ex1.ID, "")
	waitUntil(t, "the keeper's steps", func() bool { return keeper.count("") == 4 })

	refused := func(id string, status int) {
		t.Helper()
		err := h.client.Events(ctx, id, func(client.Event) error { return nil })
		var ae *client.APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, status, ae.Status, ae.Message)
		assert.Contains(t, ae.Message, "steps?since=")
	}
	refused(ex2.ID, http.StatusServiceUnavailable)
	assert.Equal(t, float64(1), h.metric(`cairn_events_refused_total{reason="executions"}`))

	// A second client reads every step, leaves, and comes back after its
	// last event: only what changed since comes, not the steps again.
	cctx, cancel := context.WithCancel(ctx)
	second := watch(cctx, h.client, ex1.ID, "")
	waitUntil(t, "the second client's steps", func() bool { return second.count("") == 4 })
	refused(ex1.ID, http.StatusTooManyRequests)
	assert.Equal(t, float64(1), h.metric(`cairn_events_refused_total{reason="clients"}`))
	cancel()
	<-second.ended
	waitUntil(t, "the second client left", func() bool { return h.kept().Clients == 1 })
	resumed := watch(ctx, h.client, ex1.ID, second.lastID)
	require.NoError(t, os.WriteFile(flag1, nil, 0o644))
	<-resumed.ended
	require.NoError(t, resumed.err)
	require.NotNil(t, resumed.done)
	assert.Equal(t, 4, resumed.count(model.StatusSucceeded))
	resumed.mu.Lock()
	assert.Less(t, resumed.events, 4+1+4+1, "not the steps again: %d events", resumed.events)
	resumed.mu.Unlock()
	<-keeper.ended

	// With ex1's follower gone, ex2 can be followed.
	waitUntil(t, "ex1's follower stops", func() bool { return h.kept().Followed == 0 })
	w2 := watch(ctx, h.client, ex2.ID, "")
	waitUntil(t, "ex2's steps", func() bool { return w2.count("") == 4 })
	require.NoError(t, os.WriteFile(flag2, nil, 0o644))
	<-w2.ended
	require.NoError(t, w2.err)
	assert.Equal(t, 4, w2.count(model.StatusSucceeded))

	for _, q := range []string{"since=x1", "since=v1.2", "since=&offset=3"} {
		var body map[string]any
		getJSON(t, h, "/v1/executions/"+ex2.ID+"/steps?"+q, http.StatusBadRequest, &body)
		assert.Contains(t, fmt.Sprint(body), "since", q)
	}
}

// TestE2EEventsFollowShards follows an execution that runs in shards (a
// chain of 24 steps, 5 units a shard) with three clients from its start:
// each gets every step's final state, in every shard, and the done event;
// once every shard is read to its end, a question for what changed costs
// the parent's query alone.
func TestE2EEventsFollowShards(t *testing.T) {
	const steps = 24
	h := newCairn(t, cairnOptions{shardUnits: 5})
	ctx := ctxTimeout(t, 3*time.Minute)
	var b strings.Builder
	for i := range steps {
		fmt.Fprintf(&b, "---\nkind: Exec\nmetadata: {name: s%02d}\nspec: {command: \"sleep 0.05\"}\nmeta: {timeout: 60}\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "dependsOn: [Exec/s%02d]\n", i-1)
		}
	}
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "sharded"})
	require.NoError(t, err)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(b.String()), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	var ws []*watcher
	for range 3 {
		ws = append(ws, watch(ctx, h.client, ex.ID, ""))
	}
	for _, w := range ws {
		<-w.ended
		require.NoError(t, w.err)
		require.NotNil(t, w.done)
		assert.Equal(t, model.ExecCompleted, w.done.Status)
		assert.Equal(t, steps, w.count(model.StatusSucceeded), "every shard's steps: %v", w.steps)
	}

	cursor := ""
	seen := map[string]model.Status{}
	for more := true; more; {
		p, err := h.client.StepsSince(ctx, ex.ID, cursor, 0)
		require.NoError(t, err)
		for _, sp := range p.Steps {
			seen[sp.ID] = sp.Status
		}
		cursor, more = p.Cursor, p.More
	}
	assert.Len(t, seen, steps)
	assert.True(t, strings.HasPrefix(cursor, "s"), "a cursor of shards: %s", cursor)
	q0 := h.metric("cairn_progress_queries_total")
	idle, err := h.client.StepsSince(ctx, ex.ID, cursor, 0)
	require.NoError(t, err)
	assert.Empty(t, idle.Steps)
	assert.Equal(t, float64(1), h.metric("cairn_progress_queries_total")-q0, "the parent's query alone")
}
