package prepare

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// fuelGraphStore is a store holding a cluster of three nodes and, as its
// own layer, the graph src.
func fuelGraphStore(t *testing.T, src string) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.PutCluster(ctx, &model.Cluster{ID: "env", Name: "env",
		Settings: map[string]any{"network_metadata": map[string]any{"vips": map[string]any{
			"vrouter": map[string]any{"ipaddr": "10.0.0.1", "node_roles": []any{"primary-controller", "controller"}},
		}}},
		Nodes: []model.Node{
			{ID: "n1", Name: "node-1", Roles: []string{"primary-controller"}},
			{ID: "n2", Name: "node-2", Roles: []string{"controller"}},
			{ID: "n3", Name: "node-3", Roles: []string{"compute"}},
		}}))
	g, err := graphs.ParseGraph(graphs.Options{}, graphs.Source{Name: "tasks.yaml", Data: []byte(src)})
	require.NoError(t, err)
	require.NoError(t, st.PutGraph(ctx, &model.StoredGraph{Layer: model.LayerCluster, OwnerID: "env", Type: "default", Source: []byte(src), ContentType: "yaml", Graph: g}))
	return st
}

// Cross dependencies written as yaql are evaluated on each node against
// its deployment data when the graph is built for an execution, and make
// the edges a literal one makes; a value of the wrong shape refuses the
// request, naming the task and the node.
func TestCheckCrossDependsYAQL(t *testing.T) {
	const base = `
- id: virtual_ips
  type: shell
  roles: [primary-controller, controller]
  parameters: {cmd: "true"}
- id: netconfig
  type: shell
  roles: ['/.*/']
  parameters: {cmd: "true"}
  cross-depends:
    yaql_exp: >
      switch(
        len($.roles.toSet().intersect($.network_metadata.vips.vrouter.node_roles.toSet())) > 0 => [],
        true => [{name => 'virtual_ips', role => $.network_metadata.vips.vrouter.node_roles}])
`
	tests := []struct {
		name string
		src  string
		deps map[string][]string
		err  string
	}{
		{"edges from each node's data", base, map[string][]string{
			"netconfig@n1": nil, "netconfig@n2": nil, "netconfig@n3": {"virtual_ips@n1", "virtual_ips@n2"},
		}, ""},
		{"a value of the wrong shape", `
- id: a
  type: shell
  roles: [compute]
  parameters: {cmd: "true"}
  cross-depended-by: {yaql_exp: "$.name"}
`, nil, `task "a": cross_depended_by on node n3: expected a list of {name, role, policy}, got a string`},
		{"an evaluation error", `
- id: a
  type: shell
  roles: [compute]
  parameters: {cmd: "true"}
  cross-depends: {yaql_exp: "$.nosuchkey"}
`, nil, `task "a": cross_depends on node n3: yaql:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := fuelGraphStore(t, tt.src)
			checked, err := NewPreparer(st, nil, Files{}).Check(context.Background(), contract.GraphRequest{ClusterID: "env"})
			if tt.err != "" {
				require.ErrorIs(t, err, ErrInvalidGraph)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			got := map[string][]string{}
			for _, s := range checked.types[0].Steps {
				if s.Task == "netconfig" {
					got[s.ID] = s.Deps
				}
			}
			assert.Equal(t, tt.deps, got)
		})
	}
}

// fuel-library gives yaql amounts under parameters.strategy: checked when
// the graph is read, each node's cap when it runs.
func TestParameterStrategyAmountYAQL(t *testing.T) {
	const src = `
- id: rabbitmq
  type: shell
  roles: [primary-controller, controller, compute]
  parameters:
    cmd: "true"
    strategy:
      type: parallel
      amount:
        yaql_exp: "switch('compute' in $.roles => 2, true => 1)"
`
	_, err := graphs.ParseGraph(graphs.Options{}, graphs.Source{Name: "bad.yaml", Data: []byte(`
- id: rabbitmq
  type: shell
  parameters:
    cmd: "true"
    strategy: {type: parallel, amount: {yaql_exp: "swtch(true => 1)"}}
`)})
	require.EqualError(t, err, `bad.yaml:6:51: [0].parameters.strategy.amount.yaql_exp: invalid yaql expression: line 1, column 1: unknown function swtch; did you mean "switch"?`)

	ctx := context.Background()
	st := fuelGraphStore(t, src)
	checked, err := NewPreparer(st, nil, Files{}).Check(ctx, contract.GraphRequest{ClusterID: "env"})
	require.NoError(t, err)
	g := checked.types[0]
	task := g.Graph.Tasks[0]
	require.NotNil(t, task.Strategy)
	assert.Equal(t, "switch('compute' in $.roles => 2, true => 1)", task.Strategy.AmountYAQL)
	y, err := newYAQLEnv(ctx, st, checked.Cluster, "e1", false, newNodeHistory(st, "env", false))
	require.NoError(t, err)
	caps := map[string]int{}
	for _, s := range g.Steps {
		require.NoError(t, y.resolveStep(ctx, s, task, s.Node, false))
		caps[s.ID] = s.Strategy
	}
	assert.Equal(t, map[string]int{"rabbitmq@n1": 1, "rabbitmq@n2": 1, "rabbitmq@n3": 2}, caps)
}
