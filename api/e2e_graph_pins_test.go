package api

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// graphCounts reads the merges and expansions the API's /metrics counts.
func (h *cairn) graphCounts() (merges, expansions int) {
	h.t.Helper()
	raw, err := h.client.Metrics(ctxTimeout(h.t, 30*time.Second))
	require.NoError(h.t, err)
	read := func(name string) int {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				n, err := strconv.ParseFloat(v, 64)
				require.NoError(h.t, err, "%s", sc.Text())
				return int(n)
			}
		}
		h.t.Fatalf("/metrics has no %s:\n%s", name, raw)
		return 0
	}
	return read("cairn_graph_merges_total"), read("cairn_graph_expansions_total")
}

// TestE2EGraphRequestMergedAndExpandedOnce executes graphs through the HTTP
// API on a Temporal dev server and counts the work on /metrics: a request
// merges and expands each of its graph types exactly once, when the API
// checks it; its execution and a retry of it run the pinned steps without
// merging or expanding again. The server's own fields are refused in a
// request.
func TestE2EGraphRequestMergedAndExpandedOnce(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	c := h.client
	suffix := strings.ToLower(strings.ReplaceAll(h.token[len(h.token)-8:], "-", ""))
	rel, err := c.CreateRelease(ctx, model.ReleaseInput{ID: "rel-" + suffix, Name: "release"})
	require.NoError(t, err)
	cl, err := c.CreateCluster(ctx, model.ClusterInput{ID: "cl-" + suffix, Name: "cluster", ReleaseID: rel.ID, Nodes: []model.Node{
		{ID: "n1", Roles: []string{"controller"}, Mode: model.NodeLocal},
		{ID: "n2", Roles: []string{"compute"}, Mode: model.NodeLocal},
	}})
	require.NoError(t, err)
	require.NoError(t, h.nodes.Sync(ctx))
	put := func(typ, src string) {
		_, err := c.PutGraph(ctx, model.LayerRelease, rel.ID, typ, client.Document{Data: []byte(src), Format: "json"})
		require.NoError(t, err)
	}
	put("default", `[{"id": "t1", "type": "shell", "roles": ["*"], "parameters": {"cmd": "echo t1 >> log"}}]`)
	put("second", `[{"id": "t2", "type": "shell", "roles": ["compute"], "parameters": {"cmd": "echo t2 >> log"}}]`)
	// flaky fails on n2 until the file ok is there.
	put("flaky", `[{"id": "f", "type": "shell", "roles": ["compute"], "parameters": {"cmd": "test -f ok && echo f >> log"}}]`)
	// A cluster layer makes every merge a real one of two layers.
	_, err = c.PutGraph(ctx, model.LayerCluster, cl.ID, "default", client.Document{Data: []byte(`[{"id": "t1", "parameters": {"cmd": "echo t1-cluster >> log"}}]`), Format: "json"})
	require.NoError(t, err)

	merges, expansions := h.graphCounts()
	require.Zero(t, merges, "merges before any request")
	require.Zero(t, expansions, "expansions before any request")
	want := func(what string, m, e int) {
		t.Helper()
		gotM, gotE := h.graphCounts()
		require.Equal(t, m, gotM, "merges after %s", what)
		require.Equal(t, e, gotE, "expansions after %s", what)
	}
	execute := func(req contract.GraphRequest, status model.ExecutionStatus) *model.Execution {
		t.Helper()
		ex, err := c.ExecuteGraph(ctx, cl.ID, req)
		require.NoError(t, err)
		done, err := c.Wait(ctx, ex.ID, 100*time.Millisecond)
		require.NoError(t, err)
		mustStatus(t, done, status)
		return done
	}

	execute(contract.GraphRequest{}, model.ExecCompleted)
	want("one type", 1, 1)
	execute(contract.GraphRequest{Types: []string{"default", "second"}}, model.ExecCompleted)
	want("two types", 3, 3)
	log, err := os.ReadFile(filepath.Join(h.nodes.NodeRoot(cl.ID, "n2"), "log"))
	require.NoError(t, err)
	require.Equal(t, "t1-cluster\nt1-cluster\nt2\n", string(log), "n2 ran")

	failed := execute(contract.GraphRequest{Type: "flaky"}, model.ExecFailed)
	want("a failed execution", 4, 4)
	require.NoError(t, os.WriteFile(filepath.Join(h.nodes.NodeRoot(cl.ID, "n2"), "ok"), nil, 0o644))
	retry, err := c.Retry(ctx, failed.ID)
	require.NoError(t, err)
	require.Equal(t, failed.ID, retry.RetryOf, "retry %+v", retry)
	done, err := c.Wait(ctx, retry.ID, 100*time.Millisecond)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	want("a retry", 4, 4)
	log, err = os.ReadFile(filepath.Join(h.nodes.NodeRoot(cl.ID, "n2"), "log"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(log), "f\n"), "the retry ran f on n2: %q", log)

	// What the server fills is refused from a client, naming the field.
	for field, req := range map[string]contract.GraphRequest{
		"clusterId": {ClusterID: cl.ID},
		"snapshots": {Snapshots: []string{"abc"}},
		"expansion": {Expansion: "abc"},
		"retryOf":   {RetryOf: []string{failed.ID}},
	} {
		_, err := c.ExecuteGraph(ctx, cl.ID, req)
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr, "%s: %v", field, err)
		require.Equal(t, http.StatusBadRequest, apiErr.Status, "%s: %v", field, err)
		require.Len(t, apiErr.Details, 1, "%s: %v", field, err)
		require.Equal(t, field, apiErr.Details[0].Path, "%s: %v", field, err)
	}
	want("refused requests", 4, 4)
}
