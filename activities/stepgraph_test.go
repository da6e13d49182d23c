package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// TestStepGraphListsEveryTypeOfAGraphRun checks that a graph execution of
// several types keeps one step index for all of them: the graph lists the
// steps of every type, the barrier closing each type, and the next type's
// steps after that barrier.
func TestStepGraphListsEveryTypeOfAGraphRun(t *testing.T) {
	st := graphStore(t)
	ctx := context.Background()
	putGraph(t, st, model.LayerRelease, "rel",
		&model.Task{ID: "install", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "install"}},
		&model.Task{ID: "restart", Type: "shell", Roles: []string{"compute"}, Requires: []string{"install"}, Parameters: map[string]any{"cmd": "restart"}})
	require.NoError(t, st.PutGraph(ctx, &model.StoredGraph{Layer: model.LayerRelease, OwnerID: "rel", Type: "check",
		Graph: &model.Graph{Type: "check", Tasks: []*model.Task{{ID: "probe", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "probe"}}}}}))

	_, steps := prepared(t, st, "e-types", contract.GraphRequest{Types: []string{"deploy", "check"}})
	graph, err := StepGraph(ctx, st, "e-types")
	require.NoError(t, err)

	deps := map[string][]string{}
	for _, s := range graph {
		deps[s.ID] = s.DependsOn
	}
	assert.Len(t, graph, len(steps), "every prepared step is in the graph")
	for _, id := range []string{"deploy/install@n2", "deploy/restart@n3", "deploy@master", "check/probe@n2", "check/probe@n3", "check@master"} {
		assert.Contains(t, deps, id)
	}
	assert.Contains(t, deps["deploy/restart@n2"], "deploy/install@n2")
	assert.Contains(t, deps["check/probe@n2"], "deploy@master", "the second type waits for the first")
	assert.ElementsMatch(t, []string{"check/probe@n2", "check/probe@n3"}, deps["check@master"])
}
