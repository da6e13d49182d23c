package starter_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/worker"
)

// TestStepsRunOnTheirNodes routes targeted resources to their nodes' task
// queues: a node with a worker applies inside its root; a node without one
// fails clearly after the bounded wait.
func TestStepsRunOnTheirNodes(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	cluster := &model.Cluster{ID: "c" + randomHex(3), Name: "lab", Nodes: []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"web"}, Mode: model.NodeLocal},
		{ID: "n3", Name: "n3", Roles: []string{"db"}, Mode: model.NodeAgent},
	}}
	require.NoError(t, h.store.PutCluster(ctx, cluster))
	n1Root := t.TempDir()
	nw, err := worker.NewNodeWorker(h.dev.Client, worker.Deps{Store: h.store}, cluster.ID, providers.Node{Name: "n1", Root: n1Root}, worker.Options{})
	require.NoError(t, err)
	require.NoError(t, nw.Start())
	defer nw.Stop()
	quick := starter.New(h.dev.Client, starter.Config{TaskQueue: h.queue, Store: h.store, NodeWait: 2 * time.Second, HeartbeatTimeout: 2 * time.Second})
	s := h.stack("nodes")
	web := `apiVersion: cairn/v1
kind: Directory
metadata: {name: etc}
spec: {path: /etc}
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec: {path: /etc/motd, content: "on n1\n"}
target: {roles: [web]}
`
	run := func(docs string) *starter.Execution {
		t.Helper()
		e, err := quick.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs), ClusterID: cluster.ID, OnFailure: model.OnFailureStop})
		require.NoError(t, err)
		done, err := quick.Await(ctx, e.ID)
		require.NoError(t, err)
		return done
	}
	e := run(web)
	mustStatus(t, e, model.ExecCompleted)
	b, err := os.ReadFile(filepath.Join(n1Root, "etc", "motd"))
	require.NoError(t, err, "n1's motd = %q, %v", b, err)
	require.Equal(t, "on n1\n", string(b), "n1's motd = %q, %v", b, err)
	rec := h.getStack(s.ID)
	require.Len(t, rec.Resources, 2, "record = %s", recordJSON(t, rec.Resources))
	require.Equal(t, "n1", rec.Resources[1].Node, "record = %s", recordJSON(t, rec.Resources))
	require.Equal(t, "/etc/motd", rec.Resources[1].ID, "record = %s", recordJSON(t, rec.Resources))
	require.Equal(t, "file/motd@n1", e.Steps[1].ID, "steps = %+v", e.Steps)
	require.Equal(t, "n1", e.Steps[1].Node, "steps = %+v", e.Steps)

	db := web + `---
apiVersion: cairn/v1
kind: File
metadata: {name: dbconf}
spec: {path: /etc/db.conf, content: "x"}
target: {nodes: [n3]}
`
	e = run(db)
	mustStatus(t, e, model.ExecFailed)
	require.Contains(t, e.Error, "node n3 has no agent polling", "error %q does not say n3 has no agent", e.Error)
}

// TestDestroyDeletesInReverseOrder removes everything a stack records: the
// files before the directory holding them, then an empty record.
func TestDestroyDeletesInReverseOrder(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	s := h.stack("destroy")
	mustStatus(t, h.apply(s.ID, filesPackage(root, "hi\n"), starter.StackRun{}), model.ExecCompleted)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := h.starter.StartDestroy(ctx, starter.StackRun{StackID: s.ID})
	require.NoError(t, err)
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	// The directory is deleted after its files (a non-empty directory
	// would fail to delete); the exec has no object to delete.
	wantReport(t, done.Report, model.Report{Deleted: 3, Unchanged: 1})
	_, err = os.Stat(filepath.Join(root, "app"))
	require.ErrorIs(t, err, fs.ErrNotExist, "app still exists: %v", err)
	rec := h.getStack(s.ID)
	require.Empty(t, rec.Resources, "record after destroy = %s (snapshot %q)", recordJSON(t, rec.Resources), rec.SnapshotHash)
	require.Empty(t, rec.SnapshotHash, "record after destroy = %s (snapshot %q)", recordJSON(t, rec.Resources), rec.SnapshotHash)
}

// TestLargePlanIsSharded runs a plan split into child workflows (a small
// shard size stands in for a huge package) and checks every file, the
// record and that the parent's history stays small.
func TestLargePlanIsSharded(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	sharded := starter.New(h.dev.Client, starter.Config{TaskQueue: h.queue, Store: h.store, BatchSize: 10, ShardUnits: 5})
	root := t.TempDir()
	const n = 230
	var docs strings.Builder
	fmt.Fprintf(&docs, "apiVersion: cairn/v1\nkind: Directory\nmetadata: {name: d}\nspec: {path: %s/d}\n", root)
	for i := range n {
		fmt.Fprintf(&docs, "---\napiVersion: cairn/v1\nkind: File\nmetadata: {name: f%03d}\nspec: {path: %s/d/f%03d, content: \"%d\"}\n", i, root, i, i)
	}
	s := h.stack("sharded")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := sharded.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs.String())})
	require.NoError(t, err)
	done, err := sharded.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	wantReport(t, done.Report, model.Report{Created: n + 1})
	for i := range n {
		b, err := os.ReadFile(filepath.Join(root, "d", fmt.Sprintf("f%03d", i)))
		require.NoError(t, err, "f%03d = %q, %v", i, b, err)
		require.Equal(t, fmt.Sprint(i), string(b), "f%03d = %q, %v", i, b, err)
	}
	rec := h.getStack(s.ID)
	require.Len(t, rec.Resources, n+1, "record has %d resources", len(rec.Resources))
	children := 0
	it := h.dev.Client.GetWorkflowHistory(ctx, e.WorkflowID, e.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a.GetWorkflowType().GetName() == "ShardWorkflow" {
			children++
		}
	}
	// 1 directory unit + 23 batches of 10 = 24 units, 5 per shard.
	require.Equal(t, 5, children, "%d shard workflows, want 5", children)
	// Re-applying is a noop across shards too.
	again, err := sharded.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs.String())})
	require.NoError(t, err)
	doneAgain, err := sharded.Await(ctx, again.ID)
	require.NoError(t, err)
	wantReport(t, doneAgain.Report, model.Report{Unchanged: n + 1})
}
