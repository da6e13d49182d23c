package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/workflows"
)

// syncBuffer is written by the agent while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAgentCommand(t *testing.T) {
	for _, k := range []string{"CAIRN_CLUSTER", "CAIRN_NODE", "CAIRN_NODE_ROOT", "CAIRN_DATABASE_URL", "CAIRN_CODEC_KEY"} {
		t.Setenv(k, "")
	}
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "cairn.db")
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	cluster := "agentcmd-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	err = st.PutCluster(context.Background(), &model.Cluster{ID: cluster, Name: "env", Nodes: []model.Node{
		{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent},
		{ID: "dev-1", Name: "dev-1", Roles: []string{"web"}},
	}})
	_ = st.Close()
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"agent", "--temporal-address", dev.HostPort, "--database-url", dbURL, "--cluster", cluster}

	errs := []struct {
		name string
		args []string
		want string
	}{
		{"no node", common, "--cluster and --node are required"},
		{"unknown node", append(common, "--node", "db-9"), `has no node "db-9" (nodes: web-1, dev-1)`},
		{"local node", append(common, "--node", "dev-1"), "is a local node"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := newAgentCmd(&app{stdout: &out, stderr: &errOut})
			cmd.SetArgs(tt.args[1:])
			err := cmd.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}

	t.Run("serves the node's queue until stopped", func(t *testing.T) {
		var out syncBuffer
		cmd := newAgentCmd(&app{stdout: &out, stderr: &syncBuffer{}})
		root := filepath.Join(dir, "web-1")
		cmd.SetArgs(append(common[1:], "--node", "web-1", "--root", root))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(ctx) }()
		queue := workflows.NodeTaskQueue(cluster, "web-1")
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), "polling task queue "+queue) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("agent did not start; output %q", out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		// Temporal sees a poller on the node's activity queue.
		for {
			resp, err := dev.Client.WorkflowService().DescribeTaskQueue(context.Background(), &workflowservice.DescribeTaskQueueRequest{
				Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
				TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
			})
			if err == nil && len(resp.GetPollers()) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("no poller on %s: %v", queue, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("agent ended with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("agent did not stop when its context ended")
		}
	})
}
