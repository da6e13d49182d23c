package api

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

const graphRelease = `- id: t1
  type: shell
  roles: ['*']
  parameters: {cmd: echo t1 >> log}
- id: t2
  type: shell
  roles: [controller]
  requires: [t1]
  parameters: {cmd: echo t2 >> log}
- id: t3
  type: shell
  roles: [compute]
  parameters: {cmd: echo t3 >> log}
`

// TestE2EGraphUploadMergeExecuteSubset uploads a release graph and a
// cluster override over HTTP, downloads the merged graph, and executes it
// on a subset of nodes and tasks: only the chosen tasks run, only on the
// chosen node, with the cluster's override. A second execution while one
// runs is refused with 409 naming it.
func TestE2EGraphUploadMergeExecuteSubset(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
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
	_, err = c.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Data: []byte(graphRelease), Format: "yaml"})
	require.NoError(t, err)
	override := `[{"id": "t1", "parameters": {"cmd": "echo t1-cluster >> log"}}]`
	_, err = c.PutGraph(ctx, model.LayerCluster, cl.ID, "default", client.Document{Data: []byte(override), Format: "json"})
	require.NoError(t, err)
	merged, err := c.MergedGraph(ctx, cl.ID, "default", "yaml")
	require.NoError(t, err)
	require.Contains(t, string(merged), "t1-cluster", "merged graph:\n%s", merged)
	require.Contains(t, string(merged), "t3", "merged graph:\n%s", merged)
	src, ctype, err := c.GetGraph(ctx, model.LayerCluster, cl.ID, "default", "")
	require.NoError(t, err, "cluster graph verbatim: %q %q %v", src, ctype, err)
	require.Equal(t, override, string(src), "cluster graph verbatim: %q %q %v", src, ctype, err)
	require.Equal(t, "application/json", ctype, "cluster graph verbatim: %q %q %v", src, ctype, err)

	ex, err := c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{Nodes: []string{"n1"}, Tasks: []string{"t1", "t2"}})
	require.NoError(t, err)
	require.Equal(t, model.ExecGraph, ex.Kind, "started %+v", ex)
	require.Equal(t, cl.ID, ex.ClusterID, "started %+v", ex)
	done, err := c.Wait(ctx, ex.ID, 100*time.Millisecond)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	n1 := filepath.Join(h.nodes.NodeRoot(cl.ID, "n1"), "log")
	b, err := os.ReadFile(n1)
	require.NoError(t, err, "n1 log = %q, %v", b, err)
	require.Equal(t, "t1-cluster\nt2\n", string(b), "n1 log = %q, %v", b, err)
	_, err = os.Stat(filepath.Join(h.nodes.NodeRoot(cl.ID, "n2"), "log"))
	require.ErrorIs(t, err, os.ErrNotExist, "n2 ran something: %v", err)
	ran := map[string]model.Status{}
	for _, s := range done.Steps {
		ran[s.ID] = s.Status
	}
	require.Equal(t, model.StatusSucceeded, ran["t1@n1"], "steps %+v", done.Steps)
	require.Equal(t, model.StatusSucceeded, ran["t2@n1"], "steps %+v", done.Steps)

	// Refused before anything starts: unknown node, task and type.
	_, err = c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{Types: []string{"default", "upgrade"}, Nodes: []string{"n9"}, Tasks: []string{"t7"}})
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr, "bad execution request: %v", err)
	require.Equal(t, http.StatusUnprocessableEntity, apiErr.Status, "bad execution request: %v", err)
	require.GreaterOrEqual(t, len(apiErr.Details), 3, "bad execution request: %v", err)
	_, err = c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{OnFailure: "explode"})
	require.True(t, client.IsStatus(err, http.StatusBadRequest), "bad onFailure: %v", err)
	_, err = c.ExecuteGraph(ctx, "nope", contract.GraphRequest{})
	require.True(t, client.IsStatus(err, http.StatusNotFound), "unknown cluster: %v", err)

	// One graph execution per cluster at a time.
	slow := `[{"id": "slow", "type": "shell", "roles": ["compute"], "parameters": {"cmd": "sleep 2"}}]`
	_, err = c.PutGraph(ctx, model.LayerRelease, rel.ID, "slow", client.Document{Data: []byte(slow), Format: "json"})
	require.NoError(t, err)
	first, err := c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{Type: "slow"})
	require.NoError(t, err)
	_, err = c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{Type: "slow"})
	require.ErrorAs(t, err, &apiErr, "second graph execution: %v, want 409 naming %s", err, first.ID)
	require.Equal(t, http.StatusConflict, apiErr.Status, "second graph execution: %v, want 409 naming %s", err, first.ID)
	require.Equal(t, first.ID, apiErr.Running, "second graph execution: %v, want 409 naming %s", err, first.ID)
	_, err = c.Wait(context.Background(), first.ID, 100*time.Millisecond)
	require.NoError(t, err)
}
