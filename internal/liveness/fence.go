package liveness

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-io/cairn/contract"
)

// heartbeatMethod is the gRPC method of an activity's heartbeat.
var heartbeatMethod = "/" + workflowservice.WorkflowService_ServiceDesc.ServiceName + "/RecordActivityTaskHeartbeat"

// Fence stops an activity attempt that may no longer be its worker's.
//
// Temporal times an attempt out when it has received none of its
// heartbeats for the heartbeat timeout, and retries it, perhaps on another
// worker. A worker cut off from Temporal (a partition: its packets are
// dropped) does not learn it: the SDK (v1.50) cancels an activity's
// context when a heartbeat fails with Unavailable, NotFound or a cancel,
// not when it times out, and with packets dropped every heartbeat times
// out. The attempt would go on running its command, or start its next
// step, while Temporal has handed it to someone else.
//
// A Fence watches the heartbeats Temporal acknowledges (Interceptor, on
// the worker's Temporal client) and cancels, with cause
// contract.ErrLostOwnership, the context of an attempt none of whose
// heartbeats was acknowledged for FenceAfter(its heartbeat timeout),
// counted from when that heartbeat was sent (at or before Temporal
// received it, so the attempt ends before Temporal's own timeout fires).
// The attempt then kills its command's process group at once, starts no
// step, records nothing more (Owned) and is handed back.
//
// Cost: one map entry per running attempt, one timer goroutine per
// attempt, and a clock read per heartbeat. A Fence serves one Temporal
// client: the interceptor must be on the client of the workers whose
// activities it fences, or no acknowledgement is seen; a Fence whose
// interceptor has seen no call fences nothing.
type Fence struct {
	active  atomic.Bool
	mu      sync.Mutex
	acked   map[string]time.Time     // task token → when its last acknowledged heartbeat was sent
	refused map[string]chan struct{} // task token → closed once Temporal answered a heartbeat with NotFound
}

// NewFence returns a fence; put Interceptor on the Temporal client's
// connection and the fence on the Interceptor of its workers.
func NewFence() *Fence {
	return &Fence{acked: map[string]time.Time{}, refused: map[string]chan struct{}{}}
}

// FenceAfter is how long an attempt lives without an acknowledged
// heartbeat: four fifths of its heartbeat timeout (4 s of the default
// 5 s). The fifth left over covers a loaded host's late timer and the
// kill of the command; Temporal's retry backoff (1 s at least) comes on
// top before another attempt can start.
func FenceAfter(heartbeatTimeout time.Duration) time.Duration {
	return heartbeatTimeout - heartbeatTimeout/5
}

// lateTask is how much later than Temporal's start an attempt may reach
// its worker before the worker confirms it with Temporal first.
const lateTask = 500 * time.Millisecond

// Interceptor is a gRPC unary client interceptor that records when each
// heartbeat Temporal acknowledged was sent, for the attempts the fence
// watches.
func (f *Fence) Interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	f.active.Store(true)
	if method != heartbeatMethod {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	sent := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	if r, ok := req.(*workflowservice.RecordActivityTaskHeartbeatRequest); ok {
		switch {
		case err == nil:
			f.ack(string(r.GetTaskToken()), sent)
		case status.Code(err) == codes.NotFound:
			// Temporal no longer knows the attempt (it timed out, or its
			// workflow ended): it is someone else's, or no one's.
			f.refuse(string(r.GetTaskToken()))
		}
	}
	return err
}

// refuse marks the attempt as one Temporal no longer knows, if it watches
// it.
func (f *Fence) refuse(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.refused[token]; ok {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

// ack moves the attempt's last acknowledgement to sent, if it watches it.
func (f *Fence) ack(token string, sent time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if last, ok := f.acked[token]; ok && sent.After(last) {
		f.acked[token] = sent
	}
}

func (f *Fence) last(token string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acked[token]
}

// fenced is what an attempt's context carries of its fence: closed once
// it is fenced off.
type fenced struct {
	done    chan struct{}
	until   func() time.Time
	refused chan struct{} // closed once Temporal answered a heartbeat: no such attempt
}

type fencedKey struct{}

// watch fences the activity of ctx off: it cancels cancel with
// contract.ErrLostOwnership once no heartbeat was acknowledged for
// FenceAfter(its heartbeat timeout). An attempt that reached the worker
// late by the two clocks (a task held up on the way) counts from
// Temporal's start, and is confirmed with a heartbeat before anything
// runs. It returns the context to run the attempt in and a stop function.
func (f *Fence) watch(ctx context.Context, cancel context.CancelCauseFunc, prior handovers) (context.Context, func()) {
	info := activity.GetInfo(ctx)
	if f == nil || !f.active.Load() || info.HeartbeatTimeout <= 0 || len(info.TaskToken) == 0 {
		return ctx, func() {}
	}
	token, after := string(info.TaskToken), FenceAfter(info.HeartbeatTimeout)
	ref := time.Now()
	late := ref.Sub(info.StartedTime) > lateTask
	if late {
		ref = info.StartedTime
	}
	refused := make(chan struct{})
	f.mu.Lock()
	f.acked[token] = ref
	f.refused[token] = refused
	f.mu.Unlock()
	if late {
		// Synchronous in the SDK: its acknowledgement moves ref, and an
		// attempt Temporal no longer knows is cancelled (LostContact).
		activity.RecordHeartbeat(ctx, prior)
	}
	st := &fenced{done: make(chan struct{}), until: func() time.Time { return f.last(token).Add(after) },
		refused: refused}
	stop := make(chan struct{})
	go func() {
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			left := time.Until(f.last(token).Add(after))
			if left <= 0 {
				close(st.done)
				cancel(contract.ErrLostOwnership)
				activity.GetLogger(ctx).Warn("attempt fenced off: no heartbeat acknowledged by Temporal", "after", after)
				return
			}
			t.Reset(left)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return context.WithValue(ctx, fencedKey{}, st), func() {
		close(stop)
		f.mu.Lock()
		delete(f.acked, token)
		delete(f.refused, token)
		f.mu.Unlock()
	}
}

// heldThroughOutage reports whether the attempt of ctx, which the SDK gave
// up for lost contact, is still its worker's until the fence says
// otherwise: a fence watches it and Temporal has not said it no longer
// knows it.
func heldThroughOutage(ctx context.Context) bool {
	st, ok := ctx.Value(fencedKey{}).(*fenced)
	if !ok {
		return false
	}
	select {
	case <-st.refused:
		return false
	default:
		return true
	}
}

// refusedOf is closed once Temporal answered that it no longer knows the
// attempt of ctx (nil outside a fenced attempt: never).
func refusedOf(ctx context.Context) <-chan struct{} {
	if st, ok := ctx.Value(fencedKey{}).(*fenced); ok {
		return st.refused
	}
	return nil
}

// OwnedUntil is when the attempt of ctx stops being its worker's unless
// Temporal acknowledges another heartbeat: the send of the last one it
// acknowledged plus FenceAfter. It is nil outside a fenced attempt (no
// Fence, or no heartbeat timeout). Read it when needed: it moves with
// every acknowledgement.
func OwnedUntil(ctx context.Context) func() time.Time {
	st, ok := ctx.Value(fencedKey{}).(*fenced)
	if !ok {
		return nil
	}
	return st.until
}

// Fenced reports whether the attempt of ctx was fenced off (see Fence).
func Fenced(ctx context.Context) bool {
	st, ok := ctx.Value(fencedKey{}).(*fenced)
	if !ok {
		return false
	}
	select {
	case <-st.done:
		return true
	default:
		return false
	}
}

// Owned is a context for recording what the attempt of ctx did: the
// activity's cancellation and its worker's stop do not end it (a command
// that ran is recorded, so its retry finds it done), but the fence does:
// once the attempt may be another's, it records nothing more. Call the
// returned function when done.
func Owned(ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if st, ok := ctx.Value(fencedKey{}).(*fenced); ok {
		go func() {
			select {
			case <-st.done:
				cancel(contract.ErrLostOwnership)
			case <-out.Done():
			}
		}()
	}
	return out, func() { cancel(nil) }
}
