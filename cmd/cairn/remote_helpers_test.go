package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/server"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

func TestMain(m *testing.M) {
	// The API evaluates posted Jsonnet in a child: this test binary.
	graphs.ServeJsonnetChild()
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// apiServer is a real Cairn API behind httptest: a SQLite store in a temp
// dir and, when asked, the starter and workers on the shared Temporal dev
// server (its own task queue, local nodes in their own directories).
type apiServer struct {
	t      *testing.T
	url    string
	token  string
	dir    string // the test's files
	store  store.Store
	client *client.Client
	locals *worker.LocalNodes
}

type apiServerOptions struct {
	temporal bool
	token    string
	// tokens are named tokens (name → token) accepted besides token.
	tokens map[string]string
	// front wraps the API handler.
	front func(http.Handler) http.Handler
	// sealKey, when set, seals the store, which lets applies bring
	// secrets.
	sealKey []byte
	// bodyLimit, when set, is the server's request body limit.
	bodyLimit int64
}

func newAPIServer(t *testing.T, o apiServerOptions) *apiServer {
	t.Helper()
	// The CLI reads these; the test's environment must not leak in.
	for _, k := range []string{envServer, envToken, "NO_COLOR"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "cairn.db"))
	require.NoError(t, err, "open store")
	t.Cleanup(func() { _ = st.Close() })
	if o.sealKey != nil {
		if st, err = store.WithSealer(st, o.sealKey); err != nil {
			t.Fatal(err)
		}
	}
	s := &apiServer{t: t, token: o.token, dir: dir, store: st}
	cat := kinds.Builtin()
	deps := api.Deps{Store: st, Catalogue: cat, Registry: server.NewExportLister(worker.DefaultRegistry(cat, nil))}
	cfg := api.Config{Token: o.token, Tokens: o.tokens, WaitTimeout: 2 * time.Minute, EventsPollInterval: 100 * time.Millisecond, EventsHeartbeat: time.Second,
		BodyLimit: o.bodyLimit}
	if o.temporal {
		dev := testenv.Temporal(t)
		queue := "cairn-cli-" + randomSuffix()
		// Stacks' URLs are read over http(s), as by default.
		wdeps := worker.Deps{Store: st, Catalogue: cat, Fetch: fetch.New(fetch.Options{})}
		wopts := worker.Options{TaskQueue: queue}
		w, err := worker.New(dev.Client, wdeps, wopts)
		require.NoError(t, err)
		worker.RegisterGraph(w, wdeps, wopts)
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
		s.locals = worker.NewLocalNodes(dev.Client, wdeps, filepath.Join(dir, "data"), worker.Options{})
		t.Cleanup(s.locals.Stop)
		starterCfg := starter.Config{TaskQueue: queue, Store: st, HeartbeatTimeout: 2 * time.Second, NodeWait: 10 * time.Second}
		st := starter.New(dev.Client, starterCfg)
		require.NoError(t, st.EnsureSearchAttributes(ctx))
		deps.Executions, deps.Drift = st, st
	}
	e, err := api.New(cfg, deps)
	require.NoError(t, err, "api.New")
	var h http.Handler = e
	if o.front != nil {
		h = o.front(e)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	s.client, err = client.New(srv.URL, o.token)
	require.NoError(t, err)
	return s
}

func randomSuffix() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// cliResult is one command's outcome.
type cliResult struct {
	code           int
	stdout, stderr string
}

// run runs cairn in-process against the server, with its URL and token.
func (s *apiServer) run(args ...string) cliResult {
	s.t.Helper()
	args = append(args, "--server", s.url)
	if s.token != "" {
		args = append(args, "--token", s.token)
	}
	return runCairn(s.t, args...)
}

// runCairn runs a command line in-process as it is.
func runCairn(t *testing.T, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := execute(ctx, args, &out, &errOut)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// ok fails the test unless the command exited with code.
func (r cliResult) expect(t *testing.T, code int) cliResult {
	t.Helper()
	require.Equal(t, code, r.code, "exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	return r
}

// has fails the test unless stdout holds every string.
func (r cliResult) has(t *testing.T, wants ...string) cliResult {
	t.Helper()
	for _, w := range wants {
		require.Contains(t, r.stdout, w, "stdout lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
	}
	return r
}

// hasErr fails the test unless stderr holds every string.
func (r cliResult) hasErr(t *testing.T, wants ...string) cliResult {
	t.Helper()
	for _, w := range wants {
		require.Contains(t, r.stderr, w, "stderr lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
	}
	return r
}

// file writes content to name under the test's directory and returns the
// path.
func (s *apiServer) file(name, content string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, name)
	require.NoError(s.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(s.t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// path is a path under the test's directory.
func (s *apiServer) path(name string) string { return filepath.Join(s.dir, name) }

func (s *apiServer) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s.t.Cleanup(cancel)
	return ctx
}

// stack creates a stack through the API and returns its id.
func (s *apiServer) stack(name string) string {
	s.t.Helper()
	st, err := s.client.CreateStack(s.ctx(), model.StackInput{Name: name})
	require.NoError(s.t, err)
	return st.ID
}

// cluster creates release rel, plugin plug and a cluster of local nodes
// served by this server's workers, and returns the cluster id.
func (s *apiServer) cluster(nodes ...model.Node) string {
	s.t.Helper()
	ctx := s.ctx()
	id := "c" + randomSuffix()
	_, err := s.client.CreateRelease(ctx, model.ReleaseInput{ID: "rel", Name: "release"})
	require.NoError(s.t, err)
	_, err = s.client.CreatePlugin(ctx, model.PluginInput{ID: "plug", Name: "plugin"})
	require.NoError(s.t, err)
	_, err = s.client.CreateCluster(ctx, model.ClusterInput{ID: id, Name: "env", ReleaseID: "rel", PluginIDs: []string{"plug"}, Nodes: nodes})
	require.NoError(s.t, err)
	if s.locals != nil {
		require.NoError(s.t, s.locals.Sync(ctx))
	}
	return id
}

// execution reads an execution through the API.
func (s *apiServer) execution(id string) *model.Execution {
	s.t.Helper()
	ex, err := s.client.GetExecution(s.ctx(), id)
	require.NoError(s.t, err, "get execution %s: %v", id, err)
	return ex
}

// waitExecution polls an execution until cond holds.
func (s *apiServer) waitExecution(id, what string, cond func(*model.Execution) bool) *model.Execution {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		ex, err := s.client.GetExecution(s.ctx(), id)
		if err == nil && cond(ex) {
			return ex
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("execution %s: not %s within 2 minutes", id, what)
	return nil
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// ansi reports whether s holds an ANSI colour sequence.
func ansi(s string) bool { return strings.Contains(s, "\x1b[") }

// waitUntil polls cond for up to a minute.
func (s *apiServer) waitUntil(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		require.False(s.t, time.Now().After(deadline), "%s: not within a minute", what)
		time.Sleep(100 * time.Millisecond)
	}
}
