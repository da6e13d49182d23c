package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// The event streams of one execution share one follower: the first client
// of an execution starts a goroutine that reads the execution's changes
// (DescribeSince, from its own cursor) every poll interval and puts each
// changed step's event, and the status event, in a changeLog; every
// client reads that log from its own position and writes what it has not
// sent yet. When the last client leaves, the follower stops.
//
// What a followed execution costs: per poll, a describe and one progress
// query (two for a sharded execution) whatever the number of clients;
// in memory, one copy of every step's latest event (its JSON, about 300
// bytes a step) whatever the number of clients. What a client costs: a
// position, a batch of at most sendBatch events being written, and the
// HTTP connection. A client never has a queue: one that falls behind (a
// slow reader) skips the states it missed and reads, when it catches up,
// the latest state of each step that changed meanwhile; one whose writes
// block longer than the write deadline is dropped and reconnects.

// sendBatch is the most events a client takes from its follower at once.
const sendBatch = 256

// Errors of hub.join; the handler answers them 503 and 429.
var (
	errTooManyFollowed = errors.New("too many executions followed")
	errTooManyClients  = errors.New("too many clients of this execution")
)

// hub keeps one follower per followed execution.
type hub struct {
	exec    Executions
	log     *slog.Logger
	present func(*model.Execution) *model.Execution
	poll    time.Duration
	// maxFollowed bounds the executions followed at once, maxClients the
	// clients of one execution.
	maxFollowed int
	maxClients  int

	mu      sync.Mutex
	follows map[string]*follower

	polls   atomic.Int64 // reads of changes by all followers
	refused [2]atomic.Int64
}

func newHub(exec Executions, log *slog.Logger, present func(*model.Execution) *model.Execution, poll time.Duration, maxFollowed, maxClients int) *hub {
	return &hub{exec: exec, log: log, present: present, poll: poll, maxFollowed: maxFollowed, maxClients: maxClients,
		follows: map[string]*follower{}}
}

// follower follows one execution for its clients.
type follower struct {
	id  string
	gen string // names this follower in event ids, for Last-Event-ID
	// clients is guarded by the hub's mutex.
	clients int
	stop    context.CancelFunc

	ready chan struct{} // closed once the first read is in (or failed)
	err   error         // the first read's error, set before ready closes

	mu      sync.Mutex
	log     *changeLog
	changed chan struct{} // closed and replaced on every change
	status  statusKey     // of the status event last told
	done    []byte        // the done event, once the execution closed
}

// statusKey is what makes a status event worth telling the clients who
// have read the last one; the counts in between ride along for new ones.
type statusKey struct {
	status   model.ExecutionStatus
	awaiting string
	waiting  string
	approval model.ApprovalStatus
	err      string
	total    int
	report   bool
}

// join adds a client to id's follower, starting one if it is the first.
func (h *hub) join(id string) (*follower, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.follows[id]
	if f == nil {
		if len(h.follows) >= h.maxFollowed {
			h.refused[0].Add(1)
			return nil, errTooManyFollowed
		}
		var gen [6]byte
		_, _ = rand.Read(gen[:])
		ctx, stop := context.WithCancel(context.Background())
		f = &follower{id: id, gen: hex.EncodeToString(gen[:]), stop: stop, ready: make(chan struct{}),
			log: newChangeLog(), changed: make(chan struct{})}
		h.follows[id] = f
		go h.run(ctx, f)
	}
	if f.clients >= h.maxClients {
		h.refused[1].Add(1)
		return nil, errTooManyClients
	}
	f.clients++
	return f, nil
}

// leave takes a client off its follower, stopping it with the last one.
func (h *hub) leave(f *follower) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.clients--
	if f.clients == 0 {
		f.stop()
		if h.follows[f.id] == f {
			delete(h.follows, f.id)
		}
	}
}

// hubStats is what the hub holds, for metrics and tests.
type hubStats struct {
	Followed int // executions followed
	Clients  int // clients of them all
	Keys     int // events kept (a step's or a status), all followers
	Slots    int // positions in the followers' logs
	Bytes    int // bytes of the events kept
}

func (h *hub) stats() hubStats {
	h.mu.Lock()
	follows := make([]*follower, 0, len(h.follows))
	var st hubStats
	for _, f := range h.follows {
		follows = append(follows, f)
		st.Clients += f.clients
	}
	st.Followed = len(follows)
	h.mu.Unlock()
	for _, f := range follows {
		f.mu.Lock()
		k, s, b := f.log.size()
		f.mu.Unlock()
		st.Keys, st.Slots, st.Bytes = st.Keys+k, st.Slots+s, st.Bytes+b
	}
	return st
}

// run follows the execution until ctx ends (its last client left) or
// the execution closed: a first read of every step, page after page,
// then a read of the changes every poll interval, and at once when the
// execution closes (a long poll on its end), then the done event.
func (h *hub) run(ctx context.Context, f *follower) {
	defer f.stop()
	cursor := ""
	first := true
	// read reads the changes after cursor, every page of them.
	read := func() (*starter.Execution, error) {
		for {
			h.polls.Add(1)
			ex, err := h.exec.DescribeSince(ctx, f.id, cursor)
			if err != nil {
				return nil, err
			}
			f.publish(h.present(fromStarter(ex)))
			if first {
				first = false
				close(f.ready)
			}
			p := ex.Progress
			if p == nil {
				return ex, nil
			}
			cursor = p.Cursor
			// A closed execution's pages are not read on: querying a
			// closed workflow replays it. Its clients read /steps.
			if !p.More || ex.Finished() || ctx.Err() != nil {
				return ex, nil
			}
		}
	}
	ex, err := read()
	if err != nil {
		f.err = err
		close(f.ready)
		return
	}
	closed := make(chan struct{})
	go func() {
		if h.exec.WaitClosed(ctx, f.id) == nil {
			close(closed)
		}
	}()
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for !ex.Finished() {
		select {
		case <-ctx.Done():
			return
		case <-closed:
			closed = nil
		case <-tick.C:
		}
		next, err := read()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Temporal hiccups are transient: the next poll reads again.
			h.log.Warn("events: reading the changes failed", "execution", f.id, "error", err)
			continue
		}
		ex = next
	}
	f.finish(h.present(fromStarter(ex)))
}

// publish puts an execution's changed steps and status in the log and
// wakes the clients if anything changed.
func (f *follower) publish(ex *model.Execution) {
	type encoded struct {
		id   string
		data []byte
	}
	steps := make([]encoded, 0, len(ex.Steps))
	for i := range ex.Steps {
		data, err := json.Marshal(&ex.Steps[i])
		if err == nil {
			steps = append(steps, encoded{ex.Steps[i].ID, data})
		}
	}
	status, _ := json.Marshal(withoutSteps(ex))
	key := keyOf(ex)

	f.mu.Lock()
	defer f.mu.Unlock()
	changed := f.log.put("", EventStatus, status, key != f.status)
	f.status = key
	for _, s := range steps {
		changed = f.log.put(s.id, EventStep, s.data, true) || changed
	}
	if changed {
		f.wake()
	}
}

// finish publishes the closed execution and its done event.
func (f *follower) finish(ex *model.Execution) {
	f.publish(ex)
	done, _ := json.Marshal(ex)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = done
	f.wake()
}

// wake tells every client waiting on the log that it changed; f.mu held.
func (f *follower) wake() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// next is what a client at pos sends next: up to sendBatch events after
// pos (appended to out) and its position once they are sent; the done
// event when the client has everything and the execution closed; and a
// channel closed at the next change, to wait on when there is nothing.
func (f *follower) next(pos uint64, out []logEvent) ([]logEvent, uint64, []byte, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, pos = f.log.after(pos, sendBatch, out)
	var done []byte
	if len(out) < sendBatch {
		done = f.done
	}
	return out, pos, done, f.changed
}

// resume is where a client that last saw event lastID starts: there, when
// the event is this follower's, else at the beginning (every step's
// latest state).
func (f *follower) resume(lastID string) uint64 {
	gen, seq, ok := strings.Cut(lastID, "-")
	if !ok || gen != f.gen {
		return 0
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > f.log.head {
		return 0
	}
	return n
}

func keyOf(ex *model.Execution) statusKey {
	k := statusKey{status: ex.Status, awaiting: ex.Awaiting, err: ex.Error, report: ex.Report != nil}
	if ex.Approval != nil {
		k.approval = ex.Approval.Status
	}
	if p := ex.Progress; p != nil {
		k.total = p.Total
		k.waiting = strings.Join(p.Waiting, "\x00")
	}
	return k
}

// joinError answers a client the hub refused.
func joinError(err error) error {
	switch {
	case errors.Is(err, errTooManyFollowed):
		return &Error{Status: http.StatusServiceUnavailable, Cause: err,
			Message: "too many executions are followed at once (CAIRN_EVENTS_MAX_EXECUTIONS); try again later, or poll GET /v1/executions/{id}/steps?since="}
	case errors.Is(err, errTooManyClients):
		return &Error{Status: http.StatusTooManyRequests, Cause: err,
			Message: "too many clients follow this execution (CAIRN_EVENTS_MAX_CLIENTS); try again later, or poll GET /v1/executions/{id}/steps?since="}
	}
	return err
}

// eventID names event seq of follower f.
func (f *follower) eventID(seq uint64) string {
	return fmt.Sprintf("%s-%d", f.gen, seq)
}
