package api

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-io/cairn/client"
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
	rel, err := c.CreateRelease(ctx, client.ReleaseInput{ID: "rel-" + suffix, Name: "release"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.CreateCluster(ctx, client.ClusterInput{ID: "cl-" + suffix, Name: "cluster", ReleaseID: rel.ID, Nodes: []model.Node{
		{ID: "n1", Roles: []string{"controller"}, Mode: model.NodeLocal},
		{ID: "n2", Roles: []string{"compute"}, Mode: model.NodeLocal},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.nodes.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Data: []byte(graphRelease), Format: "yaml"}); err != nil {
		t.Fatal(err)
	}
	override := `[{"id": "t1", "parameters": {"cmd": "echo t1-cluster >> log"}}]`
	if _, err := c.PutGraph(ctx, model.LayerCluster, cl.ID, "default", client.Document{Data: []byte(override), Format: "json"}); err != nil {
		t.Fatal(err)
	}
	merged, err := c.MergedGraph(ctx, cl.ID, "default", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(merged), "t1-cluster") || !strings.Contains(string(merged), "t3") {
		t.Fatalf("merged graph:\n%s", merged)
	}
	src, ctype, err := c.GetGraph(ctx, model.LayerCluster, cl.ID, "default", "")
	if err != nil || string(src) != override || ctype != "application/json" {
		t.Fatalf("cluster graph verbatim: %q %q %v", src, ctype, err)
	}

	ex, err := c.ExecuteGraph(ctx, cl.ID, client.GraphExecutionRequest{Nodes: []string{"n1"}, Tasks: []string{"t1", "t2"}})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Kind != model.ExecGraph || ex.ClusterID != cl.ID {
		t.Fatalf("started %+v", ex)
	}
	done, err := c.Wait(ctx, ex.ID, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, done, model.ExecCompleted)
	n1 := filepath.Join(h.nodes.NodeRoot(cl.ID, "n1"), "log")
	if b, err := os.ReadFile(n1); err != nil || string(b) != "t1-cluster\nt2\n" {
		t.Fatalf("n1 log = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h.nodes.NodeRoot(cl.ID, "n2"), "log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("n2 ran something: %v", err)
	}
	ran := map[string]model.Status{}
	for _, s := range done.Steps {
		ran[s.ID] = s.Status
	}
	if ran["t1@n1"] != model.StatusSucceeded || ran["t2@n1"] != model.StatusSucceeded {
		t.Fatalf("steps %+v", done.Steps)
	}

	// Refused before anything starts: unknown node, task and type.
	_, err = c.ExecuteGraph(ctx, cl.ID, client.GraphExecutionRequest{Types: []string{"default", "upgrade"}, Nodes: []string{"n9"}, Tasks: []string{"t7"}})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || len(apiErr.Details) < 3 {
		t.Fatalf("bad execution request: %v", err)
	}
	if _, err := c.ExecuteGraph(ctx, cl.ID, client.GraphExecutionRequest{OnFailure: "explode"}); !client.IsStatus(err, http.StatusBadRequest) {
		t.Fatalf("bad onFailure: %v", err)
	}
	if _, err := c.ExecuteGraph(ctx, "nope", client.GraphExecutionRequest{}); !client.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("unknown cluster: %v", err)
	}

	// One graph execution per cluster at a time.
	slow := `[{"id": "slow", "type": "shell", "roles": ["compute"], "parameters": {"cmd": "sleep 2"}}]`
	if _, err := c.PutGraph(ctx, model.LayerRelease, rel.ID, "slow", client.Document{Data: []byte(slow), Format: "json"}); err != nil {
		t.Fatal(err)
	}
	first, err := c.ExecuteGraph(ctx, cl.ID, client.GraphExecutionRequest{Type: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ExecuteGraph(ctx, cl.ID, client.GraphExecutionRequest{Type: "slow"})
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Running != first.ID {
		t.Fatalf("second graph execution: %v, want 409 naming %s", err, first.ID)
	}
	if _, err := c.Wait(context.Background(), first.ID, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
