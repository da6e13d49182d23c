package graphe2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

func TestMain(m *testing.M) {
	if os.Getenv(agentModeEnv) != "" {
		os.Exit(runAgentProcess())
	}
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// harness is one test's Cairn: a SQLite store in a temp dir, the control
// plane's worker on its own task queue of the shared dev server, local
// nodes each in its own directory, and a starter. Cluster ids are unique
// per test, so node task queues never mix between tests.
type harness struct {
	t       testing.TB
	dev     *testenv.DevServer
	dir     string
	dbURL   string
	st      store.Store
	queue   string
	cluster string
	starter *starter.Starter
	// graphs checks and pins requests as the API does; the worker shares it.
	graphs *prepare.Preparer
	locals *worker.LocalNodes
	// apiURL serves the agent API, once an agent needs it.
	apiURL string
}

type harnessOptions struct {
	// nodeWait bounds how long a step waits for its node's worker (0: the
	// executor's default).
	nodeWait time.Duration
	// heartbeat bounds how soon a dead worker's step is retried; the
	// default leaves room for a loaded machine.
	heartbeat   time.Duration
	parallelism int
	pollers     int
	// wrap, when set, stands between Cairn and its store.
	wrap func(store.Store) store.Store

	// filesDir is where copy_files reads its sources (CAIRN_FILES_DIR);
	// drain bounds a stopping worker's drain (0: the default).
	filesDir string
	drain    time.Duration
	// hooks configures Fuel's provisioning hooks (erase_node → its
	// command), as CAIRN_HOOK_* do on a server.
	hooks map[string]string
	// nodeClient, when set, is the Temporal client the local nodes'
	// workers use (the dev server's otherwise).
	nodeClient client.Client
}

// newHarness starts Cairn with a cluster of the given nodes (local unless
// their mode says agent), release "rel" and plugin "plug" attached.
func newHarness(t testing.TB, o harnessOptions, nodes ...model.Node) *harness {
	t.Helper()
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	h := &harness{t: t, dev: dev, dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "cairn.db")}
	ctx := context.Background()
	st, err := store.Open(ctx, h.dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	if o.wrap != nil {
		st = o.wrap(st)
	}
	h.st = st
	suffix := randomHex(4)
	h.queue = "cairn-graph-" + suffix
	h.cluster = "c" + suffix
	for _, err := range []error{
		st.PutRelease(ctx, &model.Release{ID: "rel", Name: "release"}),
		st.PutPlugin(ctx, &model.Plugin{ID: "plug", Name: "plugin"}),
		st.PutCluster(ctx, &model.Cluster{ID: h.cluster, Name: "env", ReleaseID: "rel", PluginIDs: []string{"plug"}, Nodes: nodes}),
	} {
		require.NoError(t, err)
	}
	if o.heartbeat == 0 {
		o.heartbeat = 30 * time.Second
	}
	h.starter = starter.New(dev.Client, starter.Config{
		TaskQueue: h.queue, Store: st, HeartbeatTimeout: o.heartbeat, NodeWait: o.nodeWait, Parallelism: o.parallelism,
	})
	require.NoError(t, h.starter.EnsureSearchAttributes(ctx))
	deps := worker.Deps{Store: st, Logger: testLogger()}
	if len(o.hooks) > 0 {
		deps.Catalogue, deps.Registry = fuelHooks(t, o.hooks)
	}
	wo := worker.Options{TaskQueue: h.queue, Pollers: o.pollers, FilesDir: o.filesDir, Drain: o.drain}
	h.graphs = prepare.NewPreparer(st, deps.Catalogue, prepare.Files{Dir: o.filesDir})
	deps.Graphs = h.graphs
	w, err := worker.New(dev.Client, deps, wo)
	require.NoError(t, err)
	worker.RegisterGraph(w, deps, wo)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	nodeClient := dev.Client
	if o.nodeClient != nil {
		nodeClient = o.nodeClient
	}
	h.locals = worker.NewLocalNodes(nodeClient, deps, filepath.Join(dir, "data"), worker.Options{Pollers: o.pollers, Drain: o.drain})
	require.NoError(t, h.locals.Sync(ctx))
	t.Cleanup(h.locals.Stop)
	return h
}

// fuelHooks is the catalogue and registry of a server whose provisioning
// hooks run the given commands.
func fuelHooks(t testing.TB, hooks map[string]string) (*kinds.Catalogue, *providers.Registry) {
	t.Helper()
	cat, err := kinds.Builtin().WithHooks(slices.Collect(maps.Keys(hooks))...)
	require.NoError(t, err)
	reg := worker.DefaultRegistry(cat, nil)
	worker.RegisterFuel(reg, "", hooks)
	return cat, reg
}

func localNodes() []model.Node {
	return []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"controller"}},
		{ID: "n2", Name: "n2", Roles: []string{"compute"}},
		{ID: "n3", Name: "n3", Roles: []string{"compute"}},
	}
}

// root is where a local node applies.
func (h *harness) root(node string) string { return h.locals.NodeRoot(h.cluster, node) }

// putGraph parses a graph layer as an upload would and stores it.
func (h *harness) putGraph(layer model.Layer, owner, typ, src string) {
	h.t.Helper()
	if layer == model.LayerCluster {
		owner = h.cluster
	}
	g, err := graphs.ParseGraph(graphs.Options{Partial: true}, graphs.Source{Name: string(layer) + ".yaml", Data: []byte(src)})
	require.NoError(h.t, err, "%s graph: %v", layer, err)
	g.Type = typ
	err = h.st.PutGraph(context.Background(), &model.StoredGraph{Layer: layer, OwnerID: owner, Type: typ,
		Source: []byte(src), ContentType: "application/yaml", Graph: g})
	require.NoError(h.t, err)
}

// start checks and pins run on the harness's cluster, as the API does,
// and starts it.
func (h *harness) start(run contract.GraphRequest) *starter.Execution {
	h.t.Helper()
	e, err := h.starter.StartGraph(context.Background(), h.pin(run))
	require.NoError(h.t, err)
	return e
}

// pin checks run on the harness's cluster and pins it.
func (h *harness) pin(run contract.GraphRequest) contract.GraphRequest {
	h.t.Helper()
	run.ClusterID = h.cluster
	checked, err := h.graphs.Check(context.Background(), run)
	require.NoError(h.t, err)
	pinned, err := h.graphs.Pin(context.Background(), checked)
	require.NoError(h.t, err)
	return pinned
}

func (h *harness) await(id string) *starter.Execution {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := h.starter.Await(ctx, id)
	require.NoError(h.t, err)
	return e
}

// run executes a graph to the end.
func (h *harness) run(run contract.GraphRequest) *starter.Execution {
	h.t.Helper()
	return h.await(h.start(run).ID)
}

// waitFor polls the execution until cond holds.
func (h *harness) waitFor(id, what string, cond func(*starter.Execution) bool) *starter.Execution {
	h.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		e, err := h.starter.Describe(context.Background(), id)
		if err == nil && cond(e) {
			return e
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("execution %s: timed out waiting for %s", id, what)
	return nil
}

// currentDetails is the line the Temporal UI shows for a running workflow.
func (h *harness) currentDetails(e *starter.Execution) string {
	h.t.Helper()
	v, err := h.dev.Client.QueryWorkflow(context.Background(), e.WorkflowID, e.RunID, "__temporal_workflow_metadata")
	require.NoError(h.t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(h.t, v.Get(&md))
	return md.GetCurrentDetails()
}

func (h *harness) decide(id string, action model.Decision) {
	h.t.Helper()
	_, err := h.starter.Decide(context.Background(), id, model.DecisionRequest{Action: action})
	require.NoError(h.t, err, "decide %s: %v", action, err)
}

func mustStatus(t testing.TB, e *starter.Execution, want model.ExecutionStatus) {
	t.Helper()
	require.Equal(t, want, e.Status, "execution %s status = %s (error %q, report %+v), want %s", e.ID, e.Status, e.Error, e.Report, want)
}

// stepStatus finds a step's status in an execution's progress.
func stepStatus(e *starter.Execution, id string) model.Status {
	for _, s := range e.Steps {
		if s.ID == id {
			return s.Status
		}
	}
	return ""
}

// readFile reads a file of a node's root, "" when it does not exist.
func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	require.NoError(t, err)
	return string(b)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// interval is when a task ran on a node, from the "<task>.start" and
// "<task>.end" files its command writes (nanoseconds since the epoch).
type interval struct {
	node       string
	start, end int64
}

func (h *harness) interval(node, root, task string) interval {
	h.t.Helper()
	read := func(suffix string) int64 {
		s := strings.TrimSpace(readFile(h.t, filepath.Join(root, task+suffix)))
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(h.t, err, "%s on %s: %s%s holds %q", task, node, task, suffix, s)
		return n
	}
	return interval{node: node, start: read(".start"), end: read(".end")}
}

// maxOverlap is the largest number of intervals running at one instant.
func maxOverlap(ivs []interval) int {
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, iv := range ivs {
		edges = append(edges, edge{iv.start, 1}, edge{iv.end, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta // an end before a start at the same instant
	})
	cur, best := 0, 0
	for _, e := range edges {
		cur += e.delta
		best = max(best, cur)
	}
	return best
}

// timed is a shell command that records when it ran, then does cmd.
func timed(task, cmd string) string {
	return "date +%s%N > " + task + ".start; " + cmd + "; date +%s%N > " + task + ".end"
}

func testLogger() *slog.Logger {
	if os.Getenv("CAIRN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func osStat(path string) (os.FileInfo, error) { return os.Stat(path) }
