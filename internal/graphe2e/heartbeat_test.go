package graphe2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// lateHeartbeats is a client of the dev server whose first heartbeat does
// not reach Temporal before the SDK's timeout for it, as when the
// frontend is too busy to answer in time: the call waits out its
// deadline, then fails as gRPC fails it.
func lateHeartbeats(t *testing.T, dev *testenv.DevServer, late *atomic.Int32) client.Client {
	t.Helper()
	heartbeat := "/" + workflowservice.WorkflowService_ServiceDesc.ServiceName + "/RecordActivityTaskHeartbeat"
	slow := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == heartbeat && late.CompareAndSwap(0, 1) {
			if _, ok := ctx.Deadline(); !ok {
				return fmt.Errorf("a heartbeat without a deadline")
			}
			<-ctx.Done()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	c, err := client.Dial(client.Options{HostPort: dev.HostPort, Logger: sdklog.NewStructuredLogger(testLogger()),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(slow)}}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// A heartbeat that does not reach Temporal in time makes the SDK give the attempt up and
// cancel it, though no one cancelled the step: the command it cut off is
// handed back, not failed, and the next attempt runs it to the end, once
// (it is declared safe to repeat: one that is not would wait, unknown,
// for a decision).
func TestLateHeartbeatHandsTheStepBack(t *testing.T) {
	dev := testenv.Temporal(t)
	var late atomic.Int32
	h := newHarness(t, harnessOptions{heartbeat: 6 * time.Second, nodeClient: lateHeartbeats(t, dev, &late)}, localNodes()[0])
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: slow
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo started >> runs.log; sleep 5; echo done >> runs.log"}
  meta: {idempotent: true}
`)
	e := h.run(contract.GraphRequest{})
	require.Equal(t, int32(1), late.Load(), "no heartbeat was late")
	mustStatus(t, e, model.ExecCompleted)
	assert.Equal(t, "started\nstarted\ndone\n", readFile(t, filepath.Join(h.root("n1"), "runs.log")),
		"the first attempt is cut off, the second runs to the end")
}
