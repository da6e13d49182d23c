package fleete2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// hold makes task wait on node, and no task anywhere else.
func (f *fleet) hold(node, task string) {
	f.t.Helper()
	for _, root := range f.roots {
		for _, pattern := range []string{"hold-*", "*.started"} {
			old, _ := filepath.Glob(filepath.Join(root, pattern))
			for _, p := range old {
				require.NoError(f.t, os.Remove(p))
			}
		}
	}
	root := f.roots[node]
	require.NoError(f.t, os.MkdirAll(root, 0o755))
	require.NoError(f.t, os.WriteFile(filepath.Join(root, "hold-"+task), nil, 0o644))
}

// waitStarted waits until task runs on node.
func (f *fleet) waitStarted(ctx context.Context, node, task string) {
	f.t.Helper()
	waitFile(ctx, f.t, filepath.Join(f.roots[node], task+".started"), "")
}

// waitPolled waits until every node's queue has a poller.
func (f *fleet) waitPolled(ctx context.Context, dev *testenv.DevServer, nodes []model.Node) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, n := range nodes {
		queue := workflows.NodeTaskQueue(clusterID, n.ID)
		for {
			resp, err := dev.Client.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
			if err == nil && len(resp.GetPollers()) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				f.t.Fatalf("node %s: nothing polls %s", n.ID, queue)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// rotateLogs renames each node's runs.log to <name>.log.
func (f *fleet) rotateLogs(name string) {
	f.t.Helper()
	for _, root := range f.roots {
		err := os.Rename(filepath.Join(root, "runs.log"), filepath.Join(root, name+".log"))
		if !os.IsNotExist(err) {
			require.NoError(f.t, err)
		}
	}
}

// readRun reads a finished execution's steps, every page, and its graph.
func (f *fleet) readRun(ctx context.Context, ex *model.Execution) (map[string]model.StepProgress, []model.StepDeps) {
	f.t.Helper()
	steps := map[string]model.StepProgress{}
	for {
		page, err := f.c.Steps(ctx, ex.ID, len(steps), 5000)
		require.NoError(f.t, err)
		for _, s := range page.Steps {
			steps[s.ID] = s
		}
		if len(page.Steps) == 0 || len(steps) >= page.Entries {
			break
		}
	}
	graph, err := f.c.ExecutionGraph(ctx, ex.ID)
	require.NoError(f.t, err)
	ids := map[string]bool{}
	for _, d := range graph {
		ids[d.ID] = true
	}
	for id := range steps {
		require.True(f.t, ids[id], "step %s is not in the execution's graph", id)
	}
	return steps, graph
}

func stepOf(steps map[string]model.StepProgress, id string) *model.StepProgress {
	if s, ok := steps[id]; ok {
		return &s
	}
	return nil
}

// waitFile waits until path exists and, when want is set, holds it.
func waitFile(ctx context.Context, t *testing.T, path, want string) {
	t.Helper()
	for {
		b, err := os.ReadFile(path)
		if err == nil && (want == "" || strings.Contains(string(b), want)) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never held %q (%q, %v)", path, want, b, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
