package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// newServer serves the real API over a SQLite store in a temp dir.
func newServer(t *testing.T, token string) string {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e, err := api.New(api.Config{Token: token}, api.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "::"} {
		if _, err := client.New(u, ""); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	if _, err := client.New("http://127.0.0.1:8080/", "t"); err != nil {
		t.Fatal(err)
	}
}

func TestClientAgainstTheAPI(t *testing.T) {
	const token = "client-test-token"
	url := newServer(t, token)
	c, err := client.New(url, token, client.WithUserAgent("cairn-test"), client.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if doc, err := c.OpenAPI(ctx); err != nil || !strings.HasPrefix(string(doc), "openapi:") {
		t.Fatalf("openapi: %v", err)
	}
	if m, err := c.Metrics(ctx); err != nil || !strings.Contains(string(m), "cairn_http_requests_total") {
		t.Fatalf("metrics: %v", err)
	}

	// Auth: a wrong token is a typed 401.
	bad, _ := client.New(url, "wrong")
	_, err = bad.ListStacks(ctx)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Code != "unauthorized" || apiErr.RequestID == "" {
		t.Fatalf("wrong token: %#v", err)
	}

	// Stacks.
	st, err := c.CreateStack(ctx, client.StackInput{Name: "S1", URLs: []string{"https://example.com/p.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.StackID != st.ID || st.Config == nil || len(st.URLs) != 1 {
		t.Fatalf("stack %+v", st)
	}
	if got, err := c.GetStack(ctx, st.ID); err != nil || got.Name != "S1" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if list, err := c.ListStacks(ctx); err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := c.GetStack(ctx, "nope"); !client.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("missing stack: %v", err)
	}

	// Validate: a summary, or every error with its position.
	sum, err := c.Validate(ctx, client.Document{Data: []byte("kind: Directory\nmetadata: {name: d}\nspec: {path: /srv/d}\n"), Format: "yaml"})
	if err != nil || sum.Resources != 1 || sum.Kinds["directory"] != 1 {
		t.Fatalf("validate: %+v %v", sum, err)
	}
	_, err = c.Validate(ctx, client.Document{Data: []byte("kind: Directory\nmetadata: {name: d}\nspec: {path: 5}\n---\nkind: Fiel\nmetadata: {name: f}\n"), Format: "yaml"})
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || len(apiErr.Details) < 2 {
		t.Fatalf("invalid package: %v", err)
	}
	for _, d := range apiErr.Details {
		if d.Line == 0 || d.Document != "request" {
			t.Fatalf("detail without position: %+v", d)
		}
	}
	if msg := apiErr.Error(); !strings.Contains(msg, "request") || !strings.Contains(msg, "did you mean") {
		t.Fatalf("error text %q", msg)
	}
	_, err = c.Validate(ctx, client.Document{Data: []byte("{kind: 'Directory', metadata: {name: 'd'}, spec: {path: '/x'}}"), Format: "jsonnet"})
	if err != nil {
		t.Fatalf("jsonnet: %v", err)
	}

	// Releases, plugins, clusters.
	rel, err := c.CreateRelease(ctx, client.ReleaseInput{ID: "r1", Name: "r"})
	if err != nil || rel.ID != "r1" {
		t.Fatalf("release %+v %v", rel, err)
	}
	if _, err := c.UpdateRelease(ctx, "r1", client.ReleaseInput{Name: "renamed"}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.GetRelease(ctx, "r1"); err != nil || r.Name != "renamed" {
		t.Fatalf("release %+v %v", r, err)
	}
	if _, err := c.CreatePlugin(ctx, client.PluginInput{ID: "p1", Name: "p", Version: "2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdatePlugin(ctx, "p1", client.PluginInput{Name: "p", Version: "3"}); err != nil {
		t.Fatal(err)
	}
	if p, err := c.GetPlugin(ctx, "p1"); err != nil || p.Version != "3" {
		t.Fatalf("plugin %+v %v", p, err)
	}
	cl, err := c.CreateCluster(ctx, client.ClusterInput{ID: "c1", Name: "c", ReleaseID: "r1", PluginIDs: []string{"p1"},
		Nodes: []model.Node{{ID: "n1", Roles: []string{"web"}}}})
	if err != nil || len(cl.Nodes) != 1 {
		t.Fatalf("cluster %+v %v", cl, err)
	}
	if _, err := c.UpdateCluster(ctx, "c1", client.ClusterInput{Name: "c", Nodes: []model.Node{{ID: "n1"}, {ID: "n2"}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetCluster(ctx, "c1"); err != nil || len(got.Nodes) != 2 || got.ReleaseID != "" {
		t.Fatalf("cluster %+v %v", got, err)
	}
	for _, list := range []func() (int, error){
		func() (int, error) { l, err := c.ListReleases(ctx); return len(l), err },
		func() (int, error) { l, err := c.ListPlugins(ctx); return len(l), err },
		func() (int, error) { l, err := c.ListClusters(ctx); return len(l), err },
	} {
		if n, err := list(); err != nil || n != 1 {
			t.Fatalf("list: %d %v", n, err)
		}
	}

	// Graphs.
	tasks := "- id: a\n  type: shell\n  roles: [web]\n  parameters: {cmd: echo a}\n"
	info, err := c.PutGraph(ctx, model.LayerRelease, "r1", "default", client.Document{Data: []byte(tasks), Format: "yaml"})
	if err != nil || info.Tasks != 1 {
		t.Fatalf("put graph %+v %v", info, err)
	}
	if _, err := c.PutGraph(ctx, model.LayerCluster, "c1", "default", client.Document{Data: []byte(`[{"id": "b", "type": "shell", "requires": ["a"], "parameters": {"cmd": "echo b"}}]`), Format: "json"}); err != nil {
		t.Fatal(err)
	}
	src, ctype, err := c.GetGraph(ctx, model.LayerRelease, "r1", "default", "")
	if err != nil || string(src) != tasks || ctype != "application/yaml" {
		t.Fatalf("graph %q %q %v", src, ctype, err)
	}
	if js, ctype, err := c.GetGraph(ctx, model.LayerRelease, "r1", "default", "json"); err != nil || ctype != "application/json" || !strings.Contains(string(js), `"tasks"`) {
		t.Fatalf("graph as JSON %q %q %v", js, ctype, err)
	}
	if gl, err := c.ListGraphs(ctx, model.LayerCluster, "c1"); err != nil || len(gl) != 1 || gl[0].Type != "default" {
		t.Fatalf("graphs %+v %v", gl, err)
	}
	// The cluster no longer uses r1 (it was updated without a release).
	if _, err := c.UpdateCluster(ctx, "c1", client.ClusterInput{Name: "c", ReleaseID: "r1", Nodes: []model.Node{{ID: "n1", Roles: []string{"web"}}}}); err != nil {
		t.Fatal(err)
	}
	merged, err := c.MergedGraph(ctx, "c1", "default", "json")
	if err != nil || !strings.Contains(string(merged), `"b"`) || !strings.Contains(string(merged), `"a"`) {
		t.Fatalf("merged %s %v", merged, err)
	}
	if err := c.DeleteGraph(ctx, model.LayerCluster, "c1", "default"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteGraph(ctx, model.LayerCluster, "c1", "default"); !client.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := c.ListGraphs(ctx, "galaxy", "x"); err == nil {
		t.Fatal("unknown layer accepted")
	}

	// Export by kinds without providers on the server: a typed 503.
	if _, err := c.Export(ctx, client.ExportRequest{Kinds: []string{"file"}, Selector: &client.ExportSelector{Dir: "/tmp"}}, "yaml"); !client.IsStatus(err, http.StatusServiceUnavailable) {
		t.Fatalf("export: %v", err)
	}
	if _, err := c.Export(ctx, client.ExportRequest{StackID: st.ID}, "json"); err != nil {
		t.Fatalf("export of an empty stack: %v", err)
	}

	// Executions need Temporal; this server has none.
	if _, err := c.ListExecutions(ctx, client.ExecutionFilter{}); !client.IsStatus(err, http.StatusServiceUnavailable) {
		t.Fatalf("executions: %v", err)
	}

	// Deletes.
	if err := c.DeleteCluster(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePlugin(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteRelease(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteRelease(ctx, "r1"); !client.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestAPIErrorFromForeignAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/stacks":
			http.Error(w, "upstream proxy says no", http.StatusBadGateway)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error": {"code": "conflict", "message": "stack s1 is busy", "details": []}, "running": "stack-s1.x"}`))
		}
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, "")
	_, err := c.ListStacks(context.Background())
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadGateway || apiErr.Code != "http_502" || !strings.Contains(apiErr.Message, "proxy says no") {
		t.Fatalf("foreign error: %#v", err)
	}
	_, err = c.Apply(context.Background(), "s1", &client.Document{Data: []byte("x"), Format: "yaml"}, client.ApplyOptions{})
	if !errors.As(err, &apiErr) || apiErr.Running != "stack-s1.x" || apiErr.Code != "conflict" {
		t.Fatalf("conflict: %#v", err)
	}
}

func TestDocumentFormats(t *testing.T) {
	for name, want := range map[string][2]string{
		"pkg.yaml": {"yaml", "application/yaml"}, "pkg.YML": {"yaml", "application/yaml"}, "p.json": {"json", "application/json"},
		"p.jsonnet": {"jsonnet", "application/jsonnet"}, "lib.libsonnet": {"jsonnet", "application/jsonnet"}, "noext": {"yaml", "application/yaml"},
	} {
		f := client.FormatOf(name)
		if f != want[0] || (client.Document{Format: f}).ContentType() != want[1] {
			t.Errorf("%s: %s %s", name, f, (client.Document{Format: f}).ContentType())
		}
	}
	d := client.ErrorDetail{Document: "pkg.yaml", Index: 2, Line: 3, Column: 4, Path: "spec.mode", Message: "bad"}
	if d.String() != "pkg.yaml[2]:3:4: spec.mode: bad" {
		t.Fatalf("detail %q", d.String())
	}
}

func TestMain(m *testing.M) {
	// The API evaluates posted Jsonnet in a child process: this binary.
	graphs.ServeJsonnetChild()
	os.Exit(m.Run())
}
