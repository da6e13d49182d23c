package liveness_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

const fenceHeartbeat = 2 * time.Second

// attemptEnd is how the first attempt of the test's activity ended.
type attemptEnd struct {
	cancelled    bool
	cause        error
	fenced       bool
	ownedCause   error         // the cause Owned's context ended with, nil if it had not
	ownedLeft    time.Duration // OwnedUntil, read when the attempt ended
	ranToTheEnd  bool
	hasOwnedTime bool
}

func fenceWorkflow(ctx workflow.Context, run time.Duration) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, HeartbeatTimeout: fenceHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, "FencedActivity", run).Get(ctx, nil)
}

// An attempt whose heartbeats never reach Temporal (here: swallowed on
// the way, so the SDK sees no error and never cancels it) is fenced off
// before Temporal times it out: its context ends with
// contract.ErrLostOwnership, so does Owned's, and the attempt is handed
// back. Without a fence it runs on to its end, long after Temporal gave it
// up; with heartbeats acknowledged it is never fenced.
func TestFenceEndsAnAttemptTemporalNoLongerHears(t *testing.T) {
	dev := testenv.Temporal(t)
	for _, tc := range []struct {
		name       string
		fence      bool
		swallow    bool
		wantFenced bool
	}{
		{name: "heartbeats lost, fenced", fence: true, swallow: true, wantFenced: true},
		{name: "heartbeats lost, no fence: runs on", fence: false, swallow: true},
		{name: "heartbeats acknowledged: never fenced", fence: true, swallow: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fence := liveness.NewFence()
			heartbeat := "/" + workflowservice.WorkflowService_ServiceDesc.ServiceName + "/RecordActivityTaskHeartbeat"
			var swallowed atomic.Int32
			swallow := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				if tc.swallow && method == heartbeat {
					swallowed.Add(1)
					return nil // lost on the way, and the SDK does not know it
				}
				return invoker(ctx, method, req, reply, cc, opts...)
			}
			c, err := client.Dial(client.Options{HostPort: dev.HostPort, ConnectionOptions: client.ConnectionOptions{
				DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(swallow, fence.Interceptor)}}})
			require.NoError(t, err)
			t.Cleanup(c.Close)

			queue := "fence-" + strings.ReplaceAll(t.Name(), "/", "-")
			wi := &liveness.Interceptor{}
			if tc.fence {
				wi.Fence = fence
			}
			w := sdkworker.New(c, queue, sdkworker.Options{
				Interceptors:                 []interceptor.WorkerInterceptor{wi},
				MaxHeartbeatThrottleInterval: time.Second,
			})
			ended := make(chan attemptEnd, 4)
			run := 3 * fenceHeartbeat
			w.RegisterWorkflow(fenceWorkflow)
			w.RegisterActivityWithOptions(func(ctx context.Context, run time.Duration) error {
				owned, release := liveness.Owned(ctx)
				defer release()
				var end attemptEnd
				select {
				case <-time.After(run):
					end.ranToTheEnd = true
				case <-ctx.Done():
					end.cancelled, end.cause, end.fenced = true, context.Cause(ctx), liveness.Fenced(ctx)
					select {
					case <-owned.Done():
						end.ownedCause = context.Cause(owned)
					case <-time.After(time.Second):
					}
				}
				if until := liveness.OwnedUntil(ctx); until != nil {
					end.hasOwnedTime, end.ownedLeft = true, time.Until(until())
				}
				ended <- end
				return ctx.Err()
			}, activity.RegisterOptions{Name: "FencedActivity"})
			require.NoError(t, w.Start())
			t.Cleanup(w.Stop)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			wf, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, fenceWorkflow, run)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), wf.GetID(), "", "test over") })
			var end attemptEnd
			select {
			case end = <-ended:
			case <-ctx.Done():
				t.Fatal("the attempt did not end")
			}
			assert.Equal(t, tc.fence, end.hasOwnedTime, "OwnedUntil inside a fenced attempt")
			if tc.swallow {
				assert.Positive(t, swallowed.Load(), "no heartbeat was sent")
			}
			if !tc.wantFenced {
				assert.True(t, end.ranToTheEnd, "the attempt was cut off: %v", end.cause)
				assert.False(t, end.fenced)
				return
			}
			require.True(t, end.cancelled, "the attempt ran to its end")
			assert.True(t, end.fenced, "Fenced")
			assert.ErrorIs(t, end.cause, contract.ErrLostOwnership)
			assert.ErrorIs(t, end.ownedCause, contract.ErrLostOwnership, "Owned's context did not end with the fence")
			assert.LessOrEqual(t, end.ownedLeft, time.Duration(0), "OwnedUntil is past once fenced")
			// The attempt was handed back, not failed.
			err = wf.Get(ctx, nil)
			var app *temporal.ApplicationError
			require.True(t, errors.As(err, &app), "workflow error %v", err)
			assert.Equal(t, contract.WorkerStoppingType, app.Type())
		})
	}
}

// lateWorkflow runs the activity on another task queue, through matching
// (not eagerly, in the answer to the workflow task).
func lateWorkflow(ctx workflow.Context, queue string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: queue, StartToCloseTimeout: time.Minute, HeartbeatTimeout: fenceHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, "LateActivity").Get(ctx, nil)
}

// A task that reaches its worker late (held up on the way) is confirmed
// with Temporal before the activity runs: one still current runs, one
// Temporal has already timed out (here: held up longer than its heartbeat
// timeout) starts nothing, its context ended and Stopping true from the
// start.
func TestFenceConfirmsALateTask(t *testing.T) {
	dev := testenv.Temporal(t)
	for _, tc := range []struct {
		name      string
		delay     time.Duration
		wantStale bool
	}{
		{name: "late but current", delay: 1200 * time.Millisecond},
		{name: "late past its timeout", delay: fenceHeartbeat + time.Second, wantStale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fence := liveness.NewFence()
			poll := "/" + workflowservice.WorkflowService_ServiceDesc.ServiceName + "/PollActivityTaskQueue"
			var delayed atomic.Int32
			hold := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				err := invoker(ctx, method, req, reply, cc, opts...)
				if r, ok := reply.(*workflowservice.PollActivityTaskQueueResponse); ok && method == poll && err == nil &&
					len(r.GetTaskToken()) > 0 && delayed.CompareAndSwap(0, 1) {
					time.Sleep(tc.delay)
				}
				return err
			}
			c, err := client.Dial(client.Options{HostPort: dev.HostPort, ConnectionOptions: client.ConnectionOptions{
				DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(hold, fence.Interceptor)}}})
			require.NoError(t, err)
			t.Cleanup(c.Close)
			queue := "late-" + strings.ReplaceAll(t.Name(), "/", "-")
			wfw := sdkworker.New(c, queue, sdkworker.Options{})
			wfw.RegisterWorkflow(lateWorkflow)
			require.NoError(t, wfw.Start())
			t.Cleanup(wfw.Stop)
			w := sdkworker.New(c, queue+"-act", sdkworker.Options{
				Interceptors:                 []interceptor.WorkerInterceptor{&liveness.Interceptor{Fence: fence}},
				MaxHeartbeatThrottleInterval: time.Second,
			})
			type entry struct{ stopping, cancelled bool }
			entries := make(chan entry, 4)
			w.RegisterActivityWithOptions(func(ctx context.Context) error {
				entries <- entry{stopping: liveness.Stopping(ctx), cancelled: ctx.Err() != nil}
				return nil
			}, activity.RegisterOptions{Name: "LateActivity"})
			require.NoError(t, w.Start())
			t.Cleanup(w.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			wf, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, lateWorkflow, queue+"-act")
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), wf.GetID(), "", "test over") })
			var e entry
			select {
			case e = <-entries:
			case <-ctx.Done():
				t.Fatal("the activity never ran")
			}
			require.Equal(t, int32(1), delayed.Load(), "no task was held up")
			assert.Equal(t, tc.wantStale, e.stopping, "Stopping at the activity's start")
			assert.Equal(t, tc.wantStale, e.cancelled, "context ended at the activity's start")
			if !tc.wantStale {
				require.NoError(t, wf.Get(ctx, nil))
			}
		})
	}
}
