package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/workflows"
)

func TestAgentCommand(t *testing.T) {
	for _, k := range []string{"CAIRN_CLUSTER", "CAIRN_NODE", "CAIRN_NODE_ROOT", "CAIRN_DATABASE_URL", "CAIRN_CODEC_KEY", "CAIRN_NODE_TOKEN", "CAIRN_SERVER"} {
		t.Setenv(k, "")
	}
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cluster := "agentcmd-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	require.NoError(t, st.PutCluster(context.Background(), &model.Cluster{ID: cluster, Name: "env", Nodes: []model.Node{
		{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent},
		{ID: "dev-1", Name: "dev-1", Roles: []string{"web"}},
	}}))
	e, err := api.New(api.Config{}, api.Deps{Store: st})
	require.NoError(t, err)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	token, err := agentapi.NewToken(cluster, "web-1")
	require.NoError(t, err)
	require.NoError(t, st.SetNodeTokenHash(context.Background(), cluster, "web-1", agentapi.Hash(token)))
	unknown, err := agentapi.NewToken(cluster, "db-9")
	require.NoError(t, err)
	common := []string{"agent", "--temporal-address", dev.HostPort, "--server", srv.URL}

	errs := []struct {
		name string
		args []string
		want string
	}{
		{"no token", common, "--node-token is required"},
		{"malformed token", append(common, "--node-token", "x"), "malformed node token"},
		{"unknown token", append(common, "--node-token", unknown), "invalid node token"},
		{"another node", append(common, "--node-token", token, "--node", "dev-1"), `the node token is for node "web-1", not "dev-1"`},
		{"another cluster", append(common, "--node-token", token, "--cluster", "other"), `is for cluster "` + cluster + `", not "other"`},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := newAgentCmd(&app{stdout: &out, stderr: &errOut})
			cmd.SetArgs(tt.args[1:])
			err := cmd.ExecuteContext(context.Background())
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
	require.NotContains(t, strings.Join(agentSettings, " "), "CAIRN_DATABASE_URL", "an agent takes no database settings")

	t.Run("serves the node's queue until stopped", func(t *testing.T) {
		var out testenv.SyncBuffer
		cmd := newAgentCmd(&app{stdout: &out, stderr: &testenv.SyncBuffer{}})
		root := filepath.Join(dir, "web-1")
		cmd.SetArgs(append(common[1:], "--node-token", token, "--root", root))
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
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("agent did not stop when its context ended")
		}
	})
}
