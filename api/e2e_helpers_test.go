package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// cairn is one test's whole Cairn behind HTTP: a store, a worker on its own
// task queue of the shared Temporal dev server, the starter, the API on a
// real listener, and a client of it.
type cairn struct {
	t      *testing.T
	store  store.Store
	nodes  *worker.LocalNodes
	client *client.Client
	url    string
	token  string
	env    map[string]string
	logs   *lockedBuffer
	// temporal reads the executions' histories.
	temporal tclient.Client
	// queue is the worker's task queue.
	queue string
	// graphs is the preparer the API and the worker share, as in `cairn
	// server`.
	graphs *prepare.Preparer
}

type cairnOptions struct {
	dbURL string
	env   map[string]string
	cfg   func(*Config)
	// sealKey, when set, seals the store's step data (CAIRN_CODEC_KEY).
	sealKey []byte
	// shardUnits, when set, runs plans of more units than this in shards.
	shardUnits int
	// steps, when set, is what the step activities read and write step
	// data through, over the store.
	steps func(store.Store) store.Store
}

const testUIURL = "http://ui.example:8233"

func newCairn(t *testing.T, o cairnOptions) *cairn {
	t.Helper()
	dev := testenv.Temporal(t)
	if o.dbURL == "" {
		o.dbURL = sqliteURL(t)
	}
	st := openStore(t, o.dbURL)
	if o.sealKey != nil {
		sealed, err := store.WithSealer(st, o.sealKey)
		require.NoError(t, err)
		st = sealed
	}
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	queue := "cairn-api-" + hex.EncodeToString(b[:])
	h := &cairn{t: t, store: st, env: o.env, token: "t0ken-" + hex.EncodeToString(b[:]), logs: &lockedBuffer{}, temporal: dev.Client, queue: queue}
	cfg := Config{Token: h.token, TemporalUIURL: testUIURL, TemporalNamespace: "default", WaitTimeout: 2 * time.Minute,
		EventsPollInterval: 100 * time.Millisecond, EventsHeartbeat: time.Second}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	cat := kinds.Builtin()
	// The worker reads stacks' URLs under the rules the API checks them by.
	fetcher := fetch.New(fetch.Options{Schemes: slices.Clone(cfg.AllowedURLSchemes), Dir: cfg.FetchDir,
		MaxBytes: cfg.FetchMaxBytes, Timeout: cfg.FetchTimeout})
	// Webhook receivers are httptest servers on loopback.
	h.graphs = prepare.NewPreparer(st, cat, prepare.Files{})
	wdeps := worker.Deps{Store: st, Catalogue: cat, Env: h.lookupEnv, Fetch: fetcher, Jsonnet: graphs.JsonnetProcess{}, HooksAllowPrivate: true, Graphs: h.graphs}
	if o.steps != nil {
		wdeps.Steps = o.steps(st)
	}
	wopts := worker.Options{TaskQueue: queue}
	w, err := worker.New(dev.Client, wdeps, wopts)
	require.NoError(t, err)
	worker.RegisterGraph(w, wdeps, wopts)
	h.nodes = worker.NewLocalNodes(dev.Client, wdeps, t.TempDir(), wopts)
	t.Cleanup(h.nodes.Stop)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	s := starter.New(dev.Client, starter.Config{TaskQueue: queue, Store: st, HeartbeatTimeout: 2 * time.Second, NodeWait: 5 * time.Second,
		ShardUnits: o.shardUnits})
	require.NoError(t, s.EnsureSearchAttributes(ctx))
	e, err := New(cfg, Deps{Store: st, Executions: s, Drift: s, Catalogue: cat, Graphs: h.graphs, Registry: controlPlaneLister{worker.DefaultRegistry(cat, nil)}, Logger: newTestLogger(h.logs), Env: h.lookupEnv,
		Ready: func(ctx context.Context) error { _, err := dev.Client.CheckHealth(ctx, nil); return err }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close(context.Background())) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	h.url = srv.URL
	h.client, err = client.New(srv.URL, h.token)
	require.NoError(t, err)
	return h
}

func (h *cairn) lookupEnv(k string) (string, bool) {
	v, ok := h.env[k]
	return v, ok
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// applyWait applies YAML to a stack over HTTP and returns the finished
// execution.
func (h *cairn) applyWait(stackID, docs string, opts client.ApplyOptions) *model.Execution {
	h.t.Helper()
	opts.Wait = true
	ex, err := h.client.Apply(ctxTimeout(h.t, 3*time.Minute), stackID, &client.Document{Data: []byte(docs), Format: "yaml"}, opts)
	require.NoError(h.t, err, "apply")
	require.True(h.t, ex.Finished(), "apply did not finish: %+v", ex)
	return ex
}

func mustStatus(t *testing.T, e *model.Execution, want model.ExecutionStatus) {
	t.Helper()
	require.Equal(t, want, e.Status, "execution %s status = %s (error %q), want %s", e.ID, e.Status, e.Error, want)
}

func wantReport(t *testing.T, got *model.Report, want model.Report) {
	t.Helper()
	require.NotNil(t, got, "no report, want %+v", want)
	counts := func(r model.Report) [7]any {
		return [7]any{r.Created, r.Updated, r.Deleted, r.Unchanged, r.Failed, r.Skipped, r.RolledBack}
	}
	require.Equal(t, counts(want), counts(*got), "report = %+v, want %+v (failures %+v)", *got, want, got.Failures)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		require.False(t, time.Now().After(deadline), "%s: not within 60s", what)
		time.Sleep(50 * time.Millisecond)
	}
}
