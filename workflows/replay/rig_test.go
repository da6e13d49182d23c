package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/server"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// rigShardUnits is the most units one workflow of the rig runs: a graph
// on more units runs in shards (child ShardWorkflows), as a fleet of
// thousands does under the default.
const rigShardUnits = 6

// rig is Cairn as `cairn server` composes it, in this process: a SQLite
// store, the control plane's worker with graph executions on a task queue
// of its own on the shared dev server, the local nodes' workers, the
// starter and the HTTP API on a loopback listener, and a client of it.
type rig struct {
	client *client.Client
	// ann and bob are clients with named tokens of their own: approvers
	// of what the anonymous client starts.
	ann, bob *client.Client
	nodes    *worker.LocalNodes
	temporal tclient.Client
	queue    string
	// suffix makes the ids of one rig's clusters and releases its own.
	suffix string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dev := testenv.Temporal(t)
	ctx := t.Context()
	st, err := store.Open(ctx, store.DefaultURL(t.TempDir()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	var b [5]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	queue := "cairn-replay-" + suffix
	cat := kinds.Builtin()
	graphs := prepare.NewPreparer(st, cat, prepare.Files{})
	deps := worker.Deps{Store: st, Catalogue: cat, Graphs: graphs, HooksAllowPrivate: true}
	opts := worker.Options{TaskQueue: queue, Drain: time.Second}
	w, err := worker.New(dev.Client, deps, opts)
	require.NoError(t, err)
	worker.RegisterGraph(w, deps, opts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	nodes := worker.NewLocalNodes(dev.Client, deps, t.TempDir(), opts)
	t.Cleanup(nodes.Stop)
	s := starter.New(dev.Client, starter.Config{TaskQueue: queue, Store: st, NodeWait: 30 * time.Second, ShardUnits: rigShardUnits})
	require.NoError(t, s.EnsureSearchAttributes(ctx))
	tokens := map[string]string{"ann": "ann-" + suffix, "bob": "bob-" + suffix}
	e, err := api.New(api.Config{TemporalNamespace: "default", WaitTimeout: 2 * time.Minute, Token: "anon-" + suffix, Tokens: tokens},
		api.Deps{Store: st, Executions: s, Drift: s, Catalogue: cat, Graphs: graphs, Registry: server.NewExportLister(worker.DefaultRegistry(cat, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	r := &rig{nodes: nodes, temporal: dev.Client, queue: queue, suffix: suffix}
	for c, token := range map[**client.Client]string{&r.client: "anon-" + suffix, &r.ann: tokens["ann"], &r.bob: tokens["bob"]} {
		*c, err = client.New(srv.URL, token)
		require.NoError(t, err)
	}
	return r
}

// ctxFor is a context that ends with the test or after d.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 100 ms until it holds, failing the test after
// two minutes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 2*time.Minute, 100*time.Millisecond, "%s: not within two minutes", what)
}
