package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	e, err := api.New(api.Config{Token: token}, api.Deps{Store: st})
	require.NoError(t, err)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "::"} {
		_, err := client.New(u, "")
		assert.Error(t, err, "New(%q) accepted", u)
	}
	_, err := client.New("http://127.0.0.1:8080/", "t")
	require.NoError(t, err)
}

func TestClientAgainstTheAPI(t *testing.T) {
	const token = "client-test-token"
	url := newServer(t, token)
	c, err := client.New(url, token, client.WithUserAgent("cairn-test"), client.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	require.NoError(t, err)
	ctx := context.Background()

	require.NoError(t, c.Health(ctx))
	require.NoError(t, c.Ready(ctx))
	doc, err := c.OpenAPI(ctx)
	require.NoError(t, err, "openapi")
	require.True(t, strings.HasPrefix(string(doc), "openapi:"), "openapi: %v", err)
	m, err := c.Metrics(ctx)
	require.NoError(t, err, "metrics")
	require.Contains(t, string(m), "cairn_http_requests_total", "metrics: %v", err)

	// Auth: a wrong token is a typed 401.
	bad, _ := client.New(url, "wrong")
	_, err = bad.ListStacks(ctx)
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr, "wrong token: %#v", err)
	require.Equal(t, http.StatusUnauthorized, apiErr.Status, "wrong token: %#v", err)
	require.Equal(t, "unauthorized", apiErr.Code, "wrong token: %#v", err)
	require.NotEmpty(t, apiErr.RequestID, "wrong token: %#v", err)

	// Stacks.
	st, err := c.CreateStack(ctx, model.StackInput{Name: "S1", URLs: []string{"https://example.com/p.yaml"}})
	require.NoError(t, err)
	require.Equal(t, st.ID, st.StackID, "stack %+v", st)
	require.NotNil(t, st.Config, "stack %+v", st)
	require.Len(t, st.URLs, 1, "stack %+v", st)
	got, err := c.GetStack(ctx, st.ID)
	require.NoError(t, err, "get: %+v %v", got, err)
	require.Equal(t, "S1", got.Name, "get: %+v %v", got, err)
	list, err := c.ListStacks(ctx)
	require.NoError(t, err, "list: %+v %v", list, err)
	require.Len(t, list, 1, "list: %+v %v", list, err)
	_, err = c.GetStack(ctx, "nope")
	require.True(t, client.IsStatus(err, http.StatusNotFound), "missing stack: %v", err)

	// Validate: a summary, or every error with its position.
	sum, err := c.Validate(ctx, client.Document{Data: []byte("kind: Directory\nmetadata: {name: d}\nspec: {path: /srv/d}\n"), Format: "yaml"})
	require.NoError(t, err, "validate: %+v %v", sum, err)
	require.Equal(t, 1, sum.Resources, "validate: %+v %v", sum, err)
	require.Equal(t, 1, sum.Kinds["directory"], "validate: %+v %v", sum, err)
	_, err = c.Validate(ctx, client.Document{Data: []byte("kind: Directory\nmetadata: {name: d}\nspec: {path: 5}\n---\nkind: Fiel\nmetadata: {name: f}\n"), Format: "yaml"})
	require.ErrorAs(t, err, &apiErr, "invalid package: %v", err)
	require.Equal(t, http.StatusUnprocessableEntity, apiErr.Status, "invalid package: %v", err)
	require.GreaterOrEqual(t, len(apiErr.Details), 2, "invalid package: %v", err)
	for _, d := range apiErr.Details {
		require.NotEqual(t, 0, d.Line, "detail without position: %+v", d)
		require.Equal(t, "request", d.Document, "detail without position: %+v", d)
	}
	msg := apiErr.Error()
	require.Contains(t, msg, "request", "error text")
	require.Contains(t, msg, "did you mean", "error text")
	_, err = c.Validate(ctx, client.Document{Data: []byte("{kind: 'Directory', metadata: {name: 'd'}, spec: {path: '/x'}}"), Format: "jsonnet"})
	require.NoError(t, err, "jsonnet")

	// Releases, plugins, clusters.
	rel, err := c.CreateRelease(ctx, model.ReleaseInput{ID: "r1", Name: "r"})
	require.NoError(t, err, "release %+v %v", rel, err)
	require.Equal(t, "r1", rel.ID, "release %+v %v", rel, err)
	_, err = c.UpdateRelease(ctx, "r1", model.ReleaseInput{Name: "renamed"})
	require.NoError(t, err)
	r, err := c.GetRelease(ctx, "r1")
	require.NoError(t, err, "release %+v %v", r, err)
	require.Equal(t, "renamed", r.Name, "release %+v %v", r, err)
	_, err = c.CreatePlugin(ctx, model.PluginInput{ID: "p1", Name: "p", Version: "2"})
	require.NoError(t, err)
	_, err = c.UpdatePlugin(ctx, "p1", model.PluginInput{Name: "p", Version: "3"})
	require.NoError(t, err)
	p, err := c.GetPlugin(ctx, "p1")
	require.NoError(t, err, "plugin %+v %v", p, err)
	require.Equal(t, "3", p.Version, "plugin %+v %v", p, err)
	cl, err := c.CreateCluster(ctx, model.ClusterInput{ID: "c1", Name: "c", ReleaseID: "r1", PluginIDs: []string{"p1"},
		Nodes: []model.Node{{ID: "n1", Roles: []string{"web"}}}})
	require.NoError(t, err, "cluster %+v %v", cl, err)
	require.Len(t, cl.Nodes, 1, "cluster %+v %v", cl, err)
	_, err = c.IssueNodeToken(ctx, "c1", "n1")
	require.True(t, client.IsStatus(err, http.StatusConflict), "a token for a local node: %v", err)
	_, err = c.UpdateCluster(ctx, "c1", model.ClusterInput{Name: "c", Nodes: []model.Node{{ID: "n1"}, {ID: "n2", Mode: model.NodeAgent}}})
	require.NoError(t, err)
	tok, err := c.IssueNodeToken(ctx, "c1", "n2")
	require.NoError(t, err)
	require.Equal(t, "c1", tok.Cluster, "token %+v", tok)
	require.Equal(t, "n2", tok.Node, "token %+v", tok)
	require.True(t, strings.HasPrefix(tok.Token, "cairn-node-v1."), "token %+v", tok)
	cluster, err := c.GetCluster(ctx, "c1")
	require.NoError(t, err)
	require.Len(t, cluster.Nodes, 2, "cluster %+v", cluster)
	require.Empty(t, cluster.ReleaseID, "cluster %+v", cluster)
	for _, list := range []func() (int, error){
		func() (int, error) { l, err := c.ListReleases(ctx); return len(l), err },
		func() (int, error) { l, err := c.ListPlugins(ctx); return len(l), err },
		func() (int, error) { l, err := c.ListClusters(ctx); return len(l), err },
	} {
		n, err := list()
		require.NoError(t, err, "list: %d %v", n, err)
		require.Equal(t, 1, n, "list: %d %v", n, err)
	}

	// Graphs.
	tasks := "- id: a\n  type: shell\n  roles: [web]\n  parameters: {cmd: echo a}\n"
	info, err := c.PutGraph(ctx, model.LayerRelease, "r1", "default", client.Document{Data: []byte(tasks), Format: "yaml"})
	require.NoError(t, err, "put graph %+v %v", info, err)
	require.Equal(t, 1, info.Tasks, "put graph %+v %v", info, err)
	_, err = c.PutGraph(ctx, model.LayerCluster, "c1", "default", client.Document{Data: []byte(`[{"id": "b", "type": "shell", "requires": ["a"], "parameters": {"cmd": "echo b"}}]`), Format: "json"})
	require.NoError(t, err)
	src, ctype, err := c.GetGraph(ctx, model.LayerRelease, "r1", "default", "")
	require.NoError(t, err, "graph %q %q %v", src, ctype, err)
	require.Equal(t, tasks, string(src), "graph %q %q %v", src, ctype, err)
	require.Equal(t, "application/yaml", ctype, "graph %q %q %v", src, ctype, err)
	js, ctype, err := c.GetGraph(ctx, model.LayerRelease, "r1", "default", "json")
	require.NoError(t, err, "graph as JSON")
	require.Equal(t, "application/json", ctype, "graph as JSON")
	require.Contains(t, string(js), `"tasks"`, "graph as JSON")
	gl, err := c.ListGraphs(ctx, model.LayerCluster, "c1")
	require.NoError(t, err, "graphs %+v %v", gl, err)
	require.Len(t, gl, 1, "graphs %+v %v", gl, err)
	require.Equal(t, "default", gl[0].Type, "graphs %+v %v", gl, err)
	// The cluster no longer uses r1 (it was updated without a release).
	_, err = c.UpdateCluster(ctx, "c1", model.ClusterInput{Name: "c", ReleaseID: "r1", Nodes: []model.Node{{ID: "n1", Roles: []string{"web"}}}})
	require.NoError(t, err)
	merged, err := c.MergedGraph(ctx, "c1", "default", "json")
	require.NoError(t, err, "merged %s %v", merged, err)
	require.Contains(t, string(merged), `"b"`, "merged %s %v", merged, err)
	require.Contains(t, string(merged), `"a"`, "merged %s %v", merged, err)
	require.NoError(t, c.DeleteGraph(ctx, model.LayerCluster, "c1", "default"))
	err = c.DeleteGraph(ctx, model.LayerCluster, "c1", "default")
	require.True(t, client.IsStatus(err, http.StatusNotFound), "delete twice: %v", err)
	_, err = c.ListGraphs(ctx, "galaxy", "x")
	require.Error(t, err, "unknown layer accepted")

	// Export by kinds without providers on the server: a typed 503.
	_, err = c.Export(ctx, model.ExportRequest{Kinds: []string{"file"}, Selector: &model.ExportSelector{Dir: "/tmp"}}, "yaml")
	require.True(t, client.IsStatus(err, http.StatusServiceUnavailable), "export: %v", err)
	_, err = c.Export(ctx, model.ExportRequest{StackID: st.ID}, "json")
	require.NoError(t, err, "export of an empty stack")

	// Executions need Temporal; this server has none.
	_, err = c.ListExecutions(ctx, client.ExecutionFilter{})
	require.True(t, client.IsStatus(err, http.StatusServiceUnavailable), "executions: %v", err)
	_, err = c.Steps(ctx, "some-execution", 0, 100)
	require.True(t, client.IsStatus(err, http.StatusServiceUnavailable), "steps: %v", err)

	// Deletes.
	require.NoError(t, c.DeleteCluster(ctx, "c1"))
	require.NoError(t, c.DeletePlugin(ctx, "p1"))
	require.NoError(t, c.DeleteRelease(ctx, "r1"))
	err = c.DeleteRelease(ctx, "r1")
	require.True(t, client.IsStatus(err, http.StatusNotFound), "delete twice: %v", err)
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
	require.ErrorAs(t, err, &apiErr, "foreign error: %#v", err)
	require.Equal(t, http.StatusBadGateway, apiErr.Status, "foreign error: %#v", err)
	require.Equal(t, "http_502", apiErr.Code, "foreign error: %#v", err)
	require.Contains(t, apiErr.Message, "proxy says no", "foreign error: %#v", err)
	_, err = c.Apply(context.Background(), "s1", &client.Document{Data: []byte("x"), Format: "yaml"}, client.ApplyOptions{})
	require.ErrorAs(t, err, &apiErr, "conflict: %#v", err)
	require.Equal(t, "stack-s1.x", apiErr.Running, "conflict: %#v", err)
	require.Equal(t, "conflict", apiErr.Code, "conflict: %#v", err)
}

func TestDocumentFormats(t *testing.T) {
	for format, want := range map[string]string{
		"yaml": "application/yaml", "": "application/yaml", "json": "application/json", "JSON": "application/json",
		"jsonnet": "application/jsonnet",
	} {
		assert.Equal(t, want, (client.Document{Format: format}).ContentType(), "format %q", format)
	}
	d := model.ErrorDetail{Document: "pkg.yaml", Index: 2, Line: 3, Column: 4, Path: "spec.mode", Message: "bad"}
	require.Equal(t, "pkg.yaml[2]:3:4: spec.mode: bad", d.String(), "detail")
}

func TestMain(m *testing.M) {
	// The API evaluates posted Jsonnet in a child process: this binary.
	graphs.ServeJsonnetChild()
	os.Exit(m.Run())
}
