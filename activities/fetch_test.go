package activities_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// fetchFixture is a fixture whose activities read URLs from a real HTTP
// server and a confined directory.
type fetchFixture struct {
	*fixture
	srv  *httptest.Server
	dir  string
	mu   sync.Mutex
	hits map[string]int
}

func newFetchFixture(t *testing.T, pages map[string]func(w http.ResponseWriter, r *http.Request)) *fetchFixture {
	t.Helper()
	f := &fetchFixture{fixture: newFixture(t), dir: t.TempDir(), hits: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits[r.URL.Path]++
		f.mu.Unlock()
		if h, ok := pages[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(f.srv.Close)
	fetcher := fetch.New(fetch.Options{Schemes: []string{"http", "file"}, Dir: f.dir, MaxBytes: 1024, Timeout: 300 * time.Millisecond})
	f.acts = activities.New(activities.Deps{Store: f.st, Packages: prepare.GraphsLoader{}, Fetch: fetcher})
	return f
}

// stackOf creates a stack whose record holds urls.
func (f *fetchFixture) stackOf(urls ...string) *model.Stack {
	f.t.Helper()
	s := &model.Stack{Name: "s", URLs: urls}
	require.NoError(f.t, f.st.CreateStack(context.Background(), s))
	return s
}

func serve(body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }
}

// A stack's URLs become one validated package snapshot that Prepare plans
// like a posted package: YAML over HTTP, self-contained Jsonnet (stored
// evaluated) and a file in the fetch directory.
func TestFetchPackageStoresASnapshotPrepareReads(t *testing.T) {
	f := newFetchFixture(t, map[string]func(http.ResponseWriter, *http.Request){
		"/a.yaml":    serve("kind: File\nmetadata: {name: a}\nspec: {path: /tmp/cairn-fetch-a, content: a}\n"),
		"/b.jsonnet": serve(`local n = "b"; {kind: "File", metadata: {name: n}, spec: {path: "/tmp/cairn-fetch-" + n, content: n}}`),
	})
	local := `{"kind": "File", "metadata": {"name": "c"}, "spec": {"path": "/tmp/cairn-fetch-c", "content": "c"}}`
	if err := os.WriteFile(filepath.Join(f.dir, "c.json"), []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	urls := []string{f.srv.URL + "/a.yaml", f.srv.URL + "/b.jsonnet", "file:///c.json"}
	st := f.stackOf(urls...)
	res, err := f.acts.FetchPackage(context.Background(), contract.FetchPackageInput{StackID: st.ID, URLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resources != 3 || res.SnapshotHash == "" {
		t.Fatalf("result %+v", res)
	}
	snap, err := f.st.GetSnapshot(context.Background(), res.SnapshotHash)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := prepare.DecodePackageSnapshot(snap.Content)
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded.Sources) != 3 || decoded.Sources[1].Format != "json" || strings.Contains(decoded.Sources[1].Data, "local") {
		t.Fatalf("snapshot sources %+v (Jsonnet must be stored evaluated)", decoded.Sources)
	}
	plan := f.prepare(contract.PrepareInput{StackID: st.ID, SnapshotHash: res.SnapshotHash})
	if plan.Steps != 3 {
		t.Fatalf("plan of %d steps, want 3", plan.Steps)
	}
	// The same sources give the same content-addressed snapshot.
	again, err := f.acts.FetchPackage(context.Background(), contract.FetchPackageInput{StackID: st.ID, URLs: urls})
	if err != nil || again.SnapshotHash != res.SnapshotHash {
		t.Fatalf("second fetch %+v %v, want hash %s", again, err, res.SnapshotHash)
	}
}

// Each failure says what is wrong and where; only what a retry may fix
// (5xx, network) is retryable.
func TestFetchPackageFailures(t *testing.T) {
	f := newFetchFixture(t, map[string]func(http.ResponseWriter, *http.Request){
		"/invalid.yaml":   serve("kind: File\nmetadata: {name: ok}\nspec: {path: /tmp/x, content: a}\n---\nkind: Nope\nmetadata: {name: x}\n"),
		"/import.jsonnet": serve(`import "other.libsonnet"`),
		"/empty.yaml":     serve("# nothing\n"),
		"/big.yaml":       serve(strings.Repeat("# padding\n", 200)),
		"/down.yaml":      func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) },
		"/slow.yaml": func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // answers only when the client gives up
		},
		"/graph.yaml": serve("kind: Graph\nmetadata: {type: default}\ntasks:\n  - {id: t1, type: stage}\n"),
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name       string
		urls       []string
		allowEmpty bool
		retryable  bool
		want       []string
	}{
		{"invalid document names source and line", []string{"/invalid.yaml"}, false, false, []string{"/invalid.yaml:5", "Nope"}},
		{"jsonnet imports are refused", []string{"/import.jsonnet"}, false, false, []string{"/import.jsonnet"}},
		{"empty package is not applied", []string{"/empty.yaml"}, false, false, []string{"no resources"}},
		{"graphs are not applied to a stack", []string{"/graph.yaml"}, false, false, []string{"graphs are uploaded"}},
		{"404", []string{"/missing.yaml"}, false, false, []string{"urls[0]", "404"}},
		{"size limit", []string{"/big.yaml"}, false, false, []string{"too large"}},
		{"time limit", []string{"/slow.yaml"}, false, false, []string{"urls[0]", "slow.yaml"}},
		{"5xx is retried", []string{"/down.yaml"}, false, true, []string{"503"}},
		{"network error is retried", []string{closedURL + "/p.yaml"}, false, true, []string{"urls[0]"}},
		{"scheme not allowed", []string{"ftp://example.com/p.yaml"}, false, false, []string{"scheme not allowed"}},
		{"file outside the directory", []string{"file:///../etc/passwd"}, false, false, []string{"outside"}},
		{"missing file", []string{"file:///nope.yaml"}, false, false, []string{"nope.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			urls := make([]string, len(tt.urls))
			for i, u := range tt.urls {
				if strings.HasPrefix(u, "/") {
					u = f.srv.URL + u
				}
				urls[i] = u
			}
			st := f.stackOf(urls...)
			_, err := f.acts.FetchPackage(context.Background(), contract.FetchPackageInput{StackID: st.ID, URLs: urls, AllowEmpty: tt.allowEmpty})
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("error %v (%T), want an application error", err, err)
			}
			if appErr.NonRetryable() == tt.retryable {
				t.Fatalf("non-retryable = %v, want %v: %v", appErr.NonRetryable(), !tt.retryable, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// A dry-run may plan an empty package (everything would be deleted).
	empty := f.stackOf(f.srv.URL + "/empty.yaml")
	if _, err := f.acts.FetchPackage(context.Background(), contract.FetchPackageInput{StackID: empty.ID, URLs: empty.URLs, AllowEmpty: true}); err != nil {
		t.Fatalf("empty package for a dry-run: %v", err)
	}
	// Activities without a fetcher refuse URLs outright.
	bare := activities.New(activities.Deps{Store: f.st})
	var appErr *temporal.ApplicationError
	if _, err := bare.FetchPackage(context.Background(), contract.FetchPackageInput{StackID: empty.ID, URLs: empty.URLs}); !errors.As(err, &appErr) || !appErr.NonRetryable() {
		t.Fatalf("no fetcher: %v", err)
	}
}

// RemoveStack removes an emptied record, keeps one that lists resources
// and accepts one already gone.
func TestRemoveStack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	empty := f.stack("")
	kept := f.stack("", model.StackResource{Kind: "File", PkgName: "left", ID: "/tmp/left"})
	for i, tc := range []struct {
		id        string
		removed   bool
		remaining int
	}{
		{empty.ID, true, 0},
		{empty.ID, true, 0}, // again: already gone
		{kept.ID, false, 1},
	} {
		res, err := f.acts.RemoveStack(ctx, contract.RemoveStackInput{StackID: tc.id})
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if res.Removed != tc.removed || res.Remaining != tc.remaining {
			t.Fatalf("%d: %+v, want removed %v remaining %d", i, res, tc.removed, tc.remaining)
		}
	}
	if _, err := f.st.GetStack(ctx, empty.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("emptied stack still there: %v", err)
	}
	if st, err := f.st.GetStack(ctx, kept.ID); err != nil || len(st.Resources) != 1 {
		t.Fatalf("stack with resources: %+v %v", st, err)
	}
}

// The URLs read are the stack's own: input URLs that are not exactly the
// stack's record are refused for good, and nothing is fetched; a stack
// that does not exist, or has no URLs, reads nothing either.
func TestFetchPackageReadsOnlyTheStacksURLs(t *testing.T) {
	f := newFetchFixture(t, map[string]func(http.ResponseWriter, *http.Request){
		"/mine.yaml": serve("kind: File\nmetadata: {name: mine}\nspec: {path: /tmp/cairn-fetch-mine, content: a}\n"),
		"/evil.yaml": serve("kind: Exec\nmetadata: {name: evil}\nspec: {command: \"touch /tmp/cairn-evil\"}\n"),
	})
	mine, evil := f.srv.URL+"/mine.yaml", f.srv.URL+"/evil.yaml"
	st := f.stackOf(mine)
	bare := f.stackOf()
	tests := []struct {
		name    string
		in      contract.FetchPackageInput
		wantErr string
	}{
		{"another URL", contract.FetchPackageInput{StackID: st.ID, URLs: []string{evil}}, "not stack"},
		{"an extra URL", contract.FetchPackageInput{StackID: st.ID, URLs: []string{mine, evil}}, "not stack"},
		{"a stack without URLs", contract.FetchPackageInput{StackID: bare.ID, URLs: []string{evil}}, "no URLs"},
		{"no such stack", contract.FetchPackageInput{StackID: "nope", URLs: []string{evil}}, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.acts.FetchPackage(context.Background(), tt.in)
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, err, &appErr)
			assert.True(t, appErr.NonRetryable(), "refusal must not be retried: %v", err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	f.mu.Lock()
	assert.Zero(t, f.hits["/evil.yaml"], "a refused URL was fetched")
	f.mu.Unlock()

	// Without URLs in the input, the stack's are read.
	res, err := f.acts.FetchPackage(context.Background(), contract.FetchPackageInput{StackID: st.ID})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Resources)
}
