package replay

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/webhook"
	"github.com/cairn-io/cairn/model"
)

// scenario runs real executions on a rig and returns the executions whose
// histories (with their children's) are recorded under its name.
type scenario struct {
	name string
	run  func(t *testing.T, r *rig) []string
}

// scenarios are the executions recorded: every workflow type and the
// branches an upgrade may find them in (a rollback, a step paused for a
// decision, a plan waiting for approval, a sharded graph, a hook retried,
// a drift check repairing).
var scenarios = []scenario{
	{"apply-dryrun-destroy", applyDryRunDestroy},
	{"apply-rollback", applyRollback},
	{"apply-paused-retry", applyPausedRetry},
	{"approval", approval},
	{"four-eyes-stack", fourEyesStack},
	{"four-eyes-graph", fourEyesGraph},
	{"drift-repair", driftRepair},
	{"graph-paused-retry", graphPausedRetry},
	{"graph-sharded", graphSharded},
}

func yamlDoc(s string) *client.Document { return &client.Document{Data: []byte(s), Format: "yaml"} }

// flakyReceiver is a webhook receiver that answers 503 to the first try
// of each delivery and 204 to the next, so deliveries go
// through their retry.
type flakyReceiver struct {
	mu   sync.Mutex
	seen map[string]int
}

func (f *flakyReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := r.Header.Get(webhook.DeliveryHeader)
	f.seen[ev]++
	if f.seen[ev] == 1 {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func hookServer(t *testing.T) string {
	srv := httptest.NewServer(&flakyReceiver{seen: map[string]int{}})
	t.Cleanup(srv.Close)
	return srv.URL
}

func newStack(t *testing.T, r *rig, name string) string {
	t.Helper()
	st, err := r.client.CreateStack(ctxFor(t, time.Minute), model.StackInput{Name: name + "-" + r.suffix})
	require.NoError(t, err)
	return st.ID
}

func requireStatus(t *testing.T, e *model.Execution, want model.ExecutionStatus) {
	t.Helper()
	require.Equal(t, want, e.Status, "execution %s: %s", e.ID, e.Error)
}

func wait(t *testing.T, r *rig, id string) *model.Execution {
	t.Helper()
	e, err := r.client.Wait(ctxFor(t, 3*time.Minute), id, 100*time.Millisecond)
	require.NoError(t, err)
	return e
}

// waitWaiting waits until execution id waits for a decision or approval.
func waitWaiting(t *testing.T, r *rig, id string) {
	t.Helper()
	waitFor(t, "execution "+id+" waits", func() bool {
		e, err := r.client.GetExecution(t.Context(), id)
		return err == nil && e.Status == model.ExecWaiting
	})
}

// applyDryRunDestroy: an apply of files and a command to a stack with
// hooks (its completion is delivered on the second try), a dry-run of a
// change to it, and its destroy.
func applyDryRunDestroy(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	dir := t.TempDir()
	stack := newStack(t, r, "basic")
	_, err := r.client.PutHooks(ctx, stack, []model.Hook{{URL: hookServer(t), DryRuns: true,
		Events: []string{model.EventExecutionCompleted, model.EventExecutionFailed}}})
	require.NoError(t, err)
	pkg := func(content string) string {
		return fmt.Sprintf("kind: File\nmetadata: {name: a}\nspec: {path: %[1]s/a, content: %[2]q}\n---\n"+
			"kind: File\nmetadata: {name: b}\nspec: {path: %[1]s/b, content: \"b\\n\"}\n---\n"+
			"kind: Exec\nmetadata: {name: touch}\nspec: {command: \"touch %[1]s/touched\", creates: %[1]s/touched}\ndependsOn: [File/a]\n", dir, content)
	}
	ex, err := r.client.Apply(ctx, stack, yamlDoc(pkg("a\n")), client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	plan, running, err := r.client.DryRun(ctx, stack, yamlDoc(pkg("a, changed\n")), client.DryRunOptions{})
	require.NoError(t, err)
	dryRunID := ""
	if plan != nil {
		dryRunID = plan.ExecutionID
	} else {
		dryRunID = running.ID
	}
	requireStatus(t, wait(t, r, dryRunID), model.ExecCompleted)
	del, err := r.client.DeleteStack(ctx, stack, client.DeleteOptions{Wait: true})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, del.ID), model.ExecCompleted)
	_, err = os.Stat(filepath.Join(dir, "a"))
	require.ErrorIs(t, err, os.ErrNotExist, "the destroy left the file")
	return []string{ex.ID, dryRunID, del.ID}
}

// applyRollback: a file, then a command that fails: the apply rolls the
// file back (the default failure policy).
func applyRollback(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	dir := t.TempDir()
	stack := newStack(t, r, "rollback")
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: a}\nspec: {path: %[1]s/a, content: \"a\\n\"}\n---\n"+
		"kind: Exec\nmetadata: {name: fails}\nspec: {command: \"exit 3\"}\ndependsOn: [File/a]\n", dir)
	ex, err := r.client.Apply(ctx, stack, yamlDoc(pkg), client.ApplyOptions{})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecRolledBack)
	_, err = os.Stat(filepath.Join(dir, "a"))
	require.ErrorIs(t, err, os.ErrNotExist, "the rollback left the file")
	return []string{ex.ID}
}

// applyPausedRetry: a command fails until a file exists, with onFailure
// pause; the operator creates the file and decides retry.
func applyPausedRetry(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	stack := newStack(t, r, "paused")
	pkg := fmt.Sprintf("kind: Exec\nmetadata: {name: needs-flag}\nspec: {command: \"test -f %[1]s\"}\n---\n"+
		"kind: File\nmetadata: {name: after}\nspec: {path: %[1]s.after, content: done}\ndependsOn: [Exec/needs-flag]\n", flag)
	ex, err := r.client.Apply(ctx, stack, yamlDoc(pkg), client.ApplyOptions{OnFailure: model.OnFailurePause})
	require.NoError(t, err)
	waitWaiting(t, r, ex.ID)
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	_, err = r.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	return []string{ex.ID}
}

// approval: a plan waits for approval, then is approved and applied.
func approval(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	dir := t.TempDir()
	stack := newStack(t, r, "approval")
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: a}\nspec: {path: %s/a, content: \"a\\n\"}\n", dir)
	ex, err := r.client.Apply(ctx, stack, yamlDoc(pkg), client.ApplyOptions{ApproveRequired: true, ApprovalTimeout: 72 * time.Hour})
	require.NoError(t, err)
	waitWaiting(t, r, ex.ID)
	_, err = r.client.Approve(ctx, ex.ID, "recorded")
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	_, err = os.Stat(filepath.Join(dir, "a"))
	require.NoError(t, err)
	return []string{ex.ID}
}

// fourEyesStack: a stack requiring two approvals; an apply plans and
// waits, ann approves (1 of 2), bob approves and it applies.
func fourEyesStack(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	dir := t.TempDir()
	stack := newStack(t, r, "four-eyes")
	_, err := r.client.SetApprovals(ctx, client.StackApprovals, stack, model.ApprovalPolicy{Required: 2})
	require.NoError(t, err)
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: a}\nspec: {path: %s/a, content: \"a\\n\"}\n", dir)
	ex, err := r.client.Apply(ctx, stack, yamlDoc(pkg), client.ApplyOptions{})
	require.NoError(t, err)
	waitWaiting(t, r, ex.ID)
	one, err := r.ann.Approve(ctx, ex.ID, "one")
	require.NoError(t, err)
	require.Equal(t, model.ApprovalAwaiting, one.Status)
	_, err = r.bob.Approve(ctx, ex.ID, "two")
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	_, err = os.Stat(filepath.Join(dir, "a"))
	require.NoError(t, err)
	return []string{ex.ID}
}

// fourEyesGraph: a cluster requiring an approval; a graph execution plans
// and waits, ann approves and it runs what it planned.
func fourEyesGraph(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	cluster := graphCluster(t, r, "four-eyes", 1, `[{"id": "t1", "type": "shell", "roles": ["*"], "parameters": {"cmd": "echo t1 >> order"}}]`)
	_, err := r.client.SetApprovals(ctx, client.ClusterApprovals, cluster, model.ApprovalPolicy{Required: 1})
	require.NoError(t, err)
	ex, err := r.client.ExecuteGraph(ctx, cluster, contract.GraphRequest{})
	require.NoError(t, err)
	waitWaiting(t, r, ex.ID)
	_, err = r.ann.Approve(ctx, ex.ID, "go")
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	got, err := os.ReadFile(filepath.Join(r.nodes.NodeRoot(cluster, "n0"), "order"))
	require.NoError(t, err)
	require.Equal(t, "t1\n", string(got))
	return []string{ex.ID}
}

// driftRepair: a stack applied, its file changed behind its back, a drift
// schedule with repair triggered: the check's dry-run finds the drift, its
// hook hears of it and its repair applies the package again.
func driftRepair(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	dir := t.TempDir()
	stack := newStack(t, r, "drift")
	_, err := r.client.PutHooks(ctx, stack, []model.Hook{{URL: hookServer(t), Events: []string{model.EventDriftDetected}}})
	require.NoError(t, err)
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: site}\nspec: {path: %s/site.conf, content: \"site=prod\\n\"}\n", dir)
	ex, err := r.client.Apply(ctx, stack, yamlDoc(pkg), client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "site.conf"), []byte("site=staging\n"), 0o644))
	_, err = r.client.SetDrift(ctx, stack, model.DriftSettings{Every: "1h", Repair: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.client.DeleteDrift(ctx, stack) })
	require.NoError(t, r.temporal.ScheduleClient().GetHandle(ctx, contract.DriftScheduleID(stack)).Trigger(ctx, tclient.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL}))
	var check *model.DriftCheck
	waitFor(t, "the drift check and its repair", func() bool {
		d, err := r.client.GetDrift(ctx, stack)
		if err == nil && d.LastCheck != nil && d.LastCheck.Repair != nil {
			check = d.LastCheck
		}
		return check != nil
	})
	require.True(t, check.Drifted, "%+v", check)
	require.Equal(t, model.RepairApplied, check.Repair.Status, "%+v", check.Repair)
	got, err := os.ReadFile(filepath.Join(dir, "site.conf"))
	require.NoError(t, err)
	require.Equal(t, "site=prod\n", string(got))
	return []string{check.ExecutionID}
}

// graphCluster creates a release with graph tasks (JSON) and a cluster
// of n local nodes serving it, and returns the cluster's id.
func graphCluster(t *testing.T, r *rig, name string, n int, tasks string) string {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	rel, err := r.client.CreateRelease(ctx, model.ReleaseInput{ID: name + "-" + r.suffix, Name: name})
	require.NoError(t, err)
	nodes := make([]model.Node, n)
	for i := range nodes {
		nodes[i] = model.Node{ID: fmt.Sprintf("n%d", i), Roles: []string{"compute"}, Mode: model.NodeLocal}
	}
	cl, err := r.client.CreateCluster(ctx, model.ClusterInput{ID: name + "-" + r.suffix, Name: name, ReleaseID: rel.ID, Nodes: nodes})
	require.NoError(t, err)
	require.NoError(t, r.nodes.Sync(ctx))
	_, err = r.client.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Format: "json", Data: []byte(tasks)})
	require.NoError(t, err)
	return cl.ID
}

// graphPausedRetry: a graph on two nodes whose second task fails until a
// file exists, with onFailure pause; the operator creates it and retries.
func graphPausedRetry(t *testing.T, r *rig) []string {
	ctx := ctxFor(t, 3*time.Minute)
	flag := filepath.Join(t.TempDir(), "flag")
	tasks := fmt.Sprintf(`[{"id": "first", "type": "shell", "roles": ["*"], "parameters": {"cmd": "echo first >> order"}},
		{"id": "gated", "type": "shell", "roles": ["*"], "requires": ["first"], "parameters": {"cmd": "test -f %s && echo gated >> order"}}]`, flag)
	cluster := graphCluster(t, r, "paused", 2, tasks)
	ex, err := r.client.ExecuteGraph(ctx, cluster, contract.GraphRequest{OnFailure: model.OnFailurePause})
	require.NoError(t, err)
	waitWaiting(t, r, ex.ID)
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	_, err = r.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry, All: true})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	for i := range 2 {
		got, err := os.ReadFile(filepath.Join(r.nodes.NodeRoot(cluster, fmt.Sprintf("n%d", i)), "order"))
		require.NoError(t, err)
		require.Equal(t, "first\ngated\n", string(got))
	}
	return []string{ex.ID}
}

// graphSharded: a graph of two chained tasks on eight nodes, more units
// than one workflow runs on the rig: it runs in shards.
func graphSharded(t *testing.T, r *rig) []string {
	tasks := `[{"id": "t1", "type": "shell", "roles": ["*"], "parameters": {"cmd": "echo t1 >> order"}},
		{"id": "t2", "type": "shell", "roles": ["*"], "requires": ["t1"], "parameters": {"cmd": "echo t2 >> order"}}]`
	cluster := graphCluster(t, r, "sharded", 8, tasks)
	ex, err := r.client.ExecuteGraph(ctxFor(t, time.Minute), cluster, contract.GraphRequest{})
	require.NoError(t, err)
	requireStatus(t, wait(t, r, ex.ID), model.ExecCompleted)
	for i := range 8 {
		got, err := os.ReadFile(filepath.Join(r.nodes.NodeRoot(cluster, fmt.Sprintf("n%d", i)), "order"))
		require.NoError(t, err)
		require.Equal(t, "t1\nt2\n", strings.TrimLeft(string(got), "\n"))
	}
	return []string{ex.ID}
}
