package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// pkgServer serves package documents and counts requests per path.
type pkgServer struct {
	*httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	pages map[string]func(w http.ResponseWriter, n int)
}

func newPkgServer(t *testing.T, pages map[string]func(w http.ResponseWriter, n int)) *pkgServer {
	p := &pkgServer{hits: map[string]int{}, pages: pages}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits[r.URL.Path]++
		n := p.hits[r.URL.Path]
		p.mu.Unlock()
		if h, ok := p.pages[r.URL.Path]; ok {
			h(w, n)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pkgServer) count(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

func body(s string) func(w http.ResponseWriter, n int) {
	return func(w http.ResponseWriter, _ int) { _, _ = w.Write([]byte(s)) }
}

// TestE2EApplyFromStackURLs applies and plans with an empty body: the
// execution reads the stack's URLs (http and file, confined to the fetch
// directory), validates them and goes on as with a posted package. A URL
// that cannot be read or holds an invalid package fails the execution with
// the document and line; a scheme not allowed is refused before anything
// starts.
func TestE2EApplyFromStackURLs(t *testing.T) {
	fetchDir := t.TempDir()
	h := newCairn(t, cairnOptions{cfg: func(c *Config) {
		c.AllowedURLSchemes = []string{"http", "file"}
		c.FetchDir = fetchDir
	}})
	ctx := ctxTimeout(t, 3*time.Minute)
	root := t.TempDir()
	file := func(name, content string) string {
		return fmt.Sprintf("kind: File\nmetadata: {name: %s}\nspec: {path: %s/%s, content: %q}\n", name, root, name, content)
	}
	srv := newPkgServer(t, map[string]func(http.ResponseWriter, int){
		"/pkg.yaml": body(file("served", "from http")),
		"/bad.yaml": body(file("fine", "x") + "---\nkind: Nope\nmetadata: {name: x}\n"),
		"/flaky.yaml": func(w http.ResponseWriter, n int) {
			if n == 1 {
				http.Error(w, "try later", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(file("flaky", "second time")))
		},
	})
	local := fmt.Sprintf(`{"kind": "File", "metadata": {"name": "local"}, "spec": {"path": "%s/local", "content": "from file"}}`, root)
	require.NoError(t, os.WriteFile(filepath.Join(fetchDir, "local.json"), []byte(local), 0o644))

	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "urls", URLs: []string{srv.URL + "/pkg.yaml", "file:///local.json"}})
	require.NoError(t, err)
	plan, _, err := h.client.DryRun(ctx, st.ID, nil, client.DryRunOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, plan.Summary.Create, "plan of the stack's URLs: %+v", plan.Summary)
	ex, err := h.client.Apply(ctx, st.ID, nil, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 2})
	for name, want := range map[string]string{"served": "from http", "local": "from file"} {
		b, _ := os.ReadFile(filepath.Join(root, name))
		require.Equal(t, want, string(b), "%s = %q", name, b)
	}
	rec, err := h.client.GetStack(ctx, st.ID)
	require.NoError(t, err, "stack after an apply from URLs: %+v %v", rec, err)
	require.NotEmpty(t, rec.SnapshotHash, "stack after an apply from URLs: %+v %v", rec, err)
	require.Len(t, rec.Resources, 2, "stack after an apply from URLs: %+v %v", rec, err)

	// A 5xx is retried within the execution; the second answer applies.
	flaky, err := h.client.CreateStack(ctx, model.StackInput{Name: "flaky", URLs: []string{srv.URL + "/flaky.yaml"}})
	require.NoError(t, err)
	ex, err = h.client.Apply(ctx, flaky.ID, nil, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	b, _ := os.ReadFile(filepath.Join(root, "flaky"))
	require.Equal(t, "second time", string(b), "flaky = %q after %d requests", b, srv.count("/flaky.yaml"))
	require.Equal(t, 2, srv.count("/flaky.yaml"), "flaky = %q after %d requests", b, srv.count("/flaky.yaml"))

	// Failures end the execution, naming the document (and line); a 404
	// is not retried.
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"invalid package", "/bad.yaml", []string{"/bad.yaml:5", "Nope"}},
		{"missing document", "/missing.yaml", []string{"urls[0]", "/missing.yaml", "404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			broken, err := h.client.CreateStack(ctx, model.StackInput{Name: "broken", URLs: []string{srv.URL + tc.path}})
			require.NoError(t, err)
			ex, err := h.client.Apply(ctx, broken.ID, nil, client.ApplyOptions{Wait: true})
			require.NoError(t, err)
			mustStatus(t, ex, model.ExecFailed)
			for _, w := range tc.want {
				require.Contains(t, ex.Error, w, "execution error %q does not mention %q", ex.Error, w)
			}
			n := srv.count(tc.path)
			require.Equal(t, 1, n, "%s fetched %d times, want once (not retried)", tc.path, n)
			rec, err := h.client.GetStack(ctx, broken.ID)
			require.NoError(t, err, "stack after a failed read: %+v %v", rec, err)
			require.Empty(t, rec.SnapshotHash, "stack after a failed read: %+v %v", rec, err)
			require.Empty(t, rec.Resources, "stack after a failed read: %+v %v", rec, err)
			// A dry-run answers the same failure.
			_, _, err = h.client.DryRun(ctx, broken.ID, nil, client.DryRunOptions{})
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr, "dry-run: %v", err)
			require.Equal(t, http.StatusUnprocessableEntity, apiErr.Status, "dry-run: %v", err)
			require.Contains(t, apiErr.Message, tc.want[0], "dry-run: %v", err)
		})
	}

	// Refused at creation: a scheme not allowed, a file URL climbing out.
	_, err = h.client.CreateStack(ctx, model.StackInput{Name: "bad", URLs: []string{"ftp://x/y.yaml", "file:///../etc/passwd"}})
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr, "bad urls: %v", err)
	require.Equal(t, http.StatusUnprocessableEntity, apiErr.Status, "bad urls: %v", err)
	require.Len(t, apiErr.Details, 2, "bad urls: %v", err)
	// Refused at apply, before an execution starts, for a stack recorded
	// with a scheme the configuration no longer allows.
	old := &model.Stack{Name: "old", URLs: []string{"http://example.com/p.yaml", "ftp://example.com/p.yaml"}}
	require.NoError(t, h.store.CreateStack(ctx, old))
	_, err = h.client.Apply(ctx, old.ID, nil, client.ApplyOptions{})
	require.ErrorAs(t, err, &apiErr, "disallowed scheme at apply: %v", err)
	require.Equal(t, http.StatusUnprocessableEntity, apiErr.Status, "disallowed scheme at apply: %v", err)
	require.Len(t, apiErr.Details, 1, "disallowed scheme at apply: %v", err)
	require.Equal(t, "urls[1]", apiErr.Details[0].Path, "disallowed scheme at apply: %v", err)
	empty, err := h.client.CreateStack(ctx, model.StackInput{Name: "nothing"})
	require.NoError(t, err)
	_, err = h.client.Apply(ctx, empty.ID, nil, client.ApplyOptions{})
	require.True(t, client.IsStatus(err, http.StatusBadRequest), "apply with no body and no urls: %v", err)
	for _, id := range []string{old.ID, empty.ID} {
		l, err := h.client.ListExecutions(context.Background(), client.ExecutionFilter{Stack: id})
		require.NoError(t, err, "executions of a refused apply: %+v %v", l, err)
		require.Empty(t, l.Executions, "executions of a refused apply: %+v %v", l, err)
	}
}

// TestE2EDeleteRemovesTheRecordInTheWorkflow deletes a stack without
// waiting: the destroy workflow itself removes the record, so it is gone
// the moment the workflow completes, with no request or watcher of the
// API involved.
func TestE2EDeleteRemovesTheRecordInTheWorkflow(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	dir := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "doomed"})
	require.NoError(t, err)
	mustStatus(t, h.applyWait(st.ID, plainFiles(dir, "hello\n"), client.ApplyOptions{}), model.ExecCompleted)
	ex, err := h.client.DeleteStack(ctx, st.ID, client.DeleteOptions{})
	require.NoError(t, err)
	wfID, runID := starter.ParseExecutionID(ex.ID)
	require.NoError(t, testenv.Temporal(t).Client.GetWorkflow(ctx, wfID, runID).Get(ctx, nil), "destroy")
	_, err = h.store.GetStack(ctx, st.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "stack record after the destroy workflow completed: %v", err)
	_, err = os.Stat(filepath.Join(dir, "app"))
	require.ErrorIs(t, err, os.ErrNotExist, "destroy left %s/app: %v", dir, err)
}
