// Package liveness is the interceptor every Cairn activity runs under: it
// heartbeats each activity, bounds a stopping worker's drain and hands
// back what the stop cut off, so a worker that dies or stops is noticed
// and its work resumed elsewhere, and a step's retry budget counts only
// real failures (Attempt).
package liveness

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/cairn-io/cairn/contract"
)

// DefaultDrain is how long a stopping worker lets its in-flight steps
// finish before it cuts them off and hands their activities back.
const DefaultDrain = 10 * time.Second

// handoverRetryDelay is how soon Temporal retries a handed-back activity:
// the other workers are already polling.
const handoverRetryDelay = 50 * time.Millisecond

// Interceptor is the worker interceptor every Cairn activity runs under. It
//
//   - heartbeats every activity a third of its heartbeat timeout apart, so
//     a worker that dies is noticed within that timeout whatever the
//     activity does (a command, a store write, a long Prepare);
//   - bounds a stopping worker's drain: once the worker stops (its stop
//     channel closes) an activity has Drain to finish, then its context is
//     cancelled with cause contract.ErrWorkerStopping;
//   - hands back an activity that the stop cut off: it fails with a
//     retryable contract.WorkerStoppingType error that Temporal retries on
//     another worker at once, and the count of such handovers rides on
//     the heartbeat details, so the next attempt knows which of its
//     attempts were handovers rather than failures (see Attempt);
//   - fences off an attempt whose heartbeats Temporal no longer
//     acknowledges (Fence): its context is cancelled before Temporal
//     times it out, and what that cut is handed back;
//   - treats an attempt the SDK gave up on as cut off too (see
//     LostContact): a heartbeat Temporal answered too late, an attempt it
//     no longer knows, a pause or a reset cancel the activity's context
//     though no one cancelled the step, and what that cancellation cut is
//     handed back rather than failed.
//
// The worker's own WorkerStopTimeout must exceed Drain (see StopTimeout),
// so the handed-back failure is reported before the worker exits.
type Interceptor struct {
	interceptor.WorkerInterceptorBase
	// Drain bounds the in-flight work of a stopping worker (0 =
	// DefaultDrain).
	Drain time.Duration
	// Fence, when set, fences off attempts whose heartbeats Temporal no
	// longer acknowledges (see Fence); its Interceptor must be on the
	// workers' Temporal client.
	Fence *Fence
}

// StopTimeout is the worker's WorkerStopTimeout for a drain bound: the
// drain plus the time to report what it handed back.
func StopTimeout(drain time.Duration) time.Duration {
	if drain <= 0 {
		drain = DefaultDrain
	}
	return drain + 5*time.Second
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (l *Interceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	drain := l.Drain
	if drain <= 0 {
		drain = DefaultDrain
	}
	i := &livenessInbound{drain: drain, fence: l.Fence}
	i.Next = next
	return i
}

type livenessInbound struct {
	interceptor.ActivityInboundInterceptorBase
	drain time.Duration
	fence *Fence
}

// handovers is what an activity's heartbeats carry from one attempt to the
// next.
type handovers struct {
	Handovers int `json:"handovers"`
}

type handoversKey struct{}

// attemptKey holds the SDK's context of the activity, whose cancellation
// says whether the attempt lost contact (LostContact).
type attemptKey struct{}

func (i *livenessInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	var prior handovers
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &prior)
	}
	outer := ctx
	ctx = context.WithValue(ctx, attemptKey{}, outer)
	ctx, unfence := context.WithCancelCause(context.WithoutCancel(ctx))
	defer unfence(nil)
	if d, ok := outer.Deadline(); ok {
		// The attempt's own deadline (a step's timeout) stays the deadline.
		var cancelDeadline context.CancelFunc
		ctx, cancelDeadline = context.WithDeadline(ctx, d)
		defer cancelDeadline()
	}
	ctx, stopFence := i.fence.watch(ctx, unfence, prior)
	defer stopFence()
	stopFollow := followAttempt(ctx, outer, unfence)
	defer stopFollow()
	ctx, stopDrain := drainContext(context.WithValue(ctx, handoversKey{}, prior.Handovers), i.drain)
	defer stopDrain()
	stopBeat := heartbeat(ctx, prior)
	res, err := i.Next.ExecuteActivity(ctx, in)
	stopBeat()
	if err == nil || !cutByStop(ctx, err) {
		return res, err
	}
	// The next attempt may run elsewhere and must not count this one.
	activity.RecordHeartbeat(outer, handovers{Handovers: prior.Handovers + 1})
	msg := "handed back by a stopping worker"
	switch {
	case Fenced(ctx):
		msg = "handed back: " + contract.ErrLostOwnership.Error()
	case LostContact(ctx):
		msg = "handed back: the attempt lost contact with Temporal (" + context.Cause(outer).Error() + ")"
	}
	activity.GetLogger(outer).Info(msg, "error", err.Error())
	return nil, temporal.NewApplicationErrorWithOptions(msg, contract.WorkerStoppingType,
		temporal.ApplicationErrorOptions{NextRetryDelay: handoverRetryDelay, Category: temporal.ApplicationErrorCategoryBenign})
}

// followAttempt ends ctx (through cancel) when the SDK's context of the
// attempt, outer, ends — at once, unless the SDK gave the attempt up for
// lost contact (LostContact) while a fence watches it and Temporal has
// not answered that it no longer knows the attempt (NotFound): then the
// attempt is still its worker's until the fence says otherwise
// (OwnedUntil), so
// the step in flight may finish and be recorded (its next attempt then
// resumes after it rather than finding its outcome unknown), no new step
// starts (Stopping), and the fence cuts what is still running when the
// attempt may be another's. A short outage of Temporal (a history host
// killed, a frontend restarted) thus costs no step. It returns a stop
// function.
func followAttempt(ctx, outer context.Context, cancel context.CancelCauseFunc) func() {
	end := func() {
		if !LostContact(ctx) || !heldThroughOutage(ctx) {
			cancel(context.Cause(outer))
		}
	}
	if outer.Err() != nil {
		end() // at once, so the activity sees it from its start
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-outer.Done():
			end()
		}
		// Held through an outage: until Temporal says the attempt is gone.
		select {
		case <-done:
		case <-refusedOf(ctx):
			cancel(context.Cause(outer))
		}
	}()
	return func() { close(done) }
}

// LostContact reports whether the SDK cancelled the activity's attempt
// though no one asked to cancel it: a heartbeat Temporal did not answer
// within the SDK's timeout (a slow or unreachable frontend: the SDK
// takes the attempt for timed out), an attempt Temporal no longer knows
// (it timed out; another follows), a pause or a reset. Such an attempt
// starts no step and hands back what the cancellation cut off, as a
// stopping worker does (Stopping is true), rather than failing it; the
// step in flight ends at once, or, under a fence, when the fence says the
// attempt may be another's (see followAttempt). A
// cancellation Temporal asked for (the execution's) and the activity's
// own deadline are not lost contact.
func LostContact(ctx context.Context) bool {
	attempt, ok := ctx.Value(attemptKey{}).(context.Context)
	if !ok || !errors.Is(attempt.Err(), context.Canceled) {
		return false
	}
	cause := context.Cause(attempt)
	return !temporal.IsCanceledError(cause) && !errors.Is(cause, sdkworker.ErrWorkerShutdown)
}

// cutByStop reports whether err is the stop's doing: the activity said so
// (contract.ErrWorkerStopping), or its context ended while its worker was
// stopping or after its attempt lost contact.
func cutByStop(ctx context.Context, err error) bool {
	if errors.Is(err, contract.ErrWorkerStopping) {
		return true
	}
	if !Stopping(ctx) || ctx.Err() == nil {
		return false
	}
	cause := context.Cause(ctx)
	return errors.Is(cause, contract.ErrWorkerStopping) || errors.Is(cause, sdkworker.ErrWorkerShutdown) ||
		errors.Is(cause, contract.ErrLostOwnership) || LostContact(ctx)
}

// drainContext is ctx, cancelled with cause contract.ErrWorkerStopping
// once the worker has been stopping for drain.
func drainContext(ctx context.Context, drain time.Duration) (context.Context, func()) {
	dctx, cancel := context.WithCancelCause(ctx)
	stop := activity.GetWorkerStopChannel(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-stop:
		}
		t := time.NewTimer(drain)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			cancel(contract.ErrWorkerStopping)
		}
	}()
	return dctx, func() {
		close(done)
		cancel(nil)
	}
}

// Stopping reports whether the worker running the activity is stopping,
// or the attempt lost contact with Temporal (LostContact), or was fenced
// off (Fenced): no new step starts then, and what is cut off is handed
// back.
func Stopping(ctx context.Context) bool {
	if !activity.IsActivity(ctx) {
		return false
	}
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return true
	default:
		return LostContact(ctx) || Fenced(ctx)
	}
}

// heartbeat keeps an activity visibly alive, so a worker that dies is
// noticed within the heartbeat timeout and the activity is retried
// elsewhere, and so cancellation reaches it. Each beat carries the
// handovers so far. It returns a stop function.
func heartbeat(ctx context.Context, details handovers) func() {
	hb := activity.GetInfo(ctx).HeartbeatTimeout
	if hb <= 0 {
		return func() {}
	}
	every := max(hb/3, 100*time.Millisecond)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, details)
			}
		}
	}()
	return func() { close(done) }
}

// Attempt is the activity's attempt as a step's retry budget sees it:
// Temporal's attempt number less the attempts stopping workers handed
// back (1 outside an activity).
func Attempt(ctx context.Context) int {
	n := RawAttempt(ctx)
	if h, ok := ctx.Value(handoversKey{}).(int); ok {
		n -= h
	}
	return max(n, 1)
}

// RawAttempt is Temporal's attempt number (1 outside an activity): above 1,
// an earlier attempt may have left work behind.
func RawAttempt(ctx context.Context) int {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return int(activity.GetInfo(ctx).Attempt)
}
