package prepare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fuellab"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// fuelLibraryDir holds fuel-library's task files (../shared from the
// repository's root).
const fuelLibraryDir = "../../shared/testdata/fuel-library"

// fuelGraphs parses each of fuel-library's graphs: the release graph (every
// deployment_*.yaml) and the others (graphs_*.yaml), by name.
func fuelGraphs(t *testing.T, cat *kinds.Catalogue) map[string]*model.Graph {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fuelLibraryDir, "*.yaml"))
	require.NoError(t, err)
	if len(paths) == 0 {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("no fuel-library files in %s", fuelLibraryDir)
		}
		t.Skipf("no fuel-library files in %s", fuelLibraryDir)
	}
	sources := map[string][]graphs.Source{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		name := filepath.Base(p)
		graph := "release"
		if !strings.HasPrefix(name, "deployment_") {
			graph = strings.TrimSuffix(strings.TrimPrefix(name, "graphs_"), "_tasks.yaml")
		}
		sources[graph] = append(sources[graph], graphs.Source{Name: name, Data: data})
	}
	out := map[string]*model.Graph{}
	for name, srcs := range sources {
		docs, err := graphs.Parse(graphs.Options{Catalogue: cat}, srcs...)
		require.NoError(t, err, name)
		require.Len(t, docs.Graphs, 1, name)
		out[name] = docs.Graphs[0]
	}
	return out
}

// fuelFleet is the cluster of the version-th execution, fuellab's fleet
// of 36 nodes: one node with other roles at first, then as fuellab has
// it with other settings and a node's network scheme changed, then
// other settings again, then two nodes gone and a node's network roles
// changed. So a later execution's change functions compare its nodes
// with an execution whose nodes were the same, or were not.
func fuelFleet(version int) *model.Cluster {
	settings := fuellab.Settings()
	set := func(section, key string, v any) {
		settings[section].(map[string]any)[key] = map[string]any{"value": v}
	}
	nodes := fuellab.Nodes(36)
	switch version {
	case 0:
		nodes[10].Roles = []string{"compute"}
	case 1:
		set("public_ssl", "hostname", "public-1.fuel.local")
		set("common", "debug", true)
		nodes[3].Attributes["network_scheme"].(map[string]any)["version"] = "1.2"
	case 2:
		set("public_ssl", "hostname", "public-1.fuel.local")
		set("storage", "objects_ceph", true)
		settings["external_ntp"] = map[string]any{"ntp_list": map[string]any{"value": []any{"1.pool.ntp.org"}}}
	default:
		nodes = append(nodes[:4], nodes[6:]...)
		nodes[11].Attributes["network_roles"] = map[string]any{"mgmt/database": "10.20.9.9"}
	}
	return &model.Cluster{ID: "fleet", Name: "fleet", Settings: settings, Nodes: nodes}
}

// resolved is what resolving a step's expressions made of it.
type resolved struct {
	Deps      []string
	Condition string
	Strategy  int
	Spec      model.Spec
	Err       string
}

// resolveGraphs expands each graph on y's cluster (its yaql cross
// dependencies evaluated through y) and resolves every step's Fuel
// expressions as Prepare does.
func resolveGraphs(ctx context.Context, t *testing.T, y *yaqlEnv, cat *kinds.Catalogue, gs map[string]*model.Graph) (map[string]resolved, []*model.Step) {
	t.Helper()
	out := map[string]resolved{}
	var all []*model.Step
	for name, g := range gs {
		steps, err := graphs.Expand(g, y.cluster.Nodes, graphs.ExpandOptions{Catalogue: cat, CrossDeps: y.crossDeps(ctx)})
		require.NoError(t, err, name)
		require.NoError(t, y.failed)
		tasks := map[string]*model.Task{}
		for _, task := range g.Tasks {
			tasks[task.ID] = task
		}
		for _, s := range steps {
			strategyOf := tasks[s.Task]
			if s.StrategyScope != "" {
				strategyOf = tasks[s.StrategyScope]
			}
			r := resolved{}
			if err := y.resolveStep(ctx, s, strategyOf, taskNode(s), s.Skipped || isStructural(s.Kind)); err != nil {
				r.Err = err.Error()
			}
			r.Deps, r.Condition, r.Strategy, r.Spec = s.Deps, s.Condition, s.Strategy, s.Spec
			out[name+"/"+s.ID] = r
		}
		all = append(all, steps...)
	}
	return out, all
}

// fuel-library's graphs prepared on a few dozen nodes of varied settings,
// four executions in a row (nodes' roles, data and settings changed, then
// nodes removed; each task's last run in the execution before or the one
// before that): every step's expressions (conditions, strategy amounts, values,
// yaql cross dependencies) resolve on every node to what they resolve to
// without the preparation's memo.
func TestFuelExpressionsThroughTheMemo(t *testing.T) {
	ctx := context.Background()
	cat, err := kinds.Builtin().WithHooks(kinds.Hooks()...)
	require.NoError(t, err)
	gs := fuelGraphs(t, cat)
	require.Contains(t, gs, "release")
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })

	for version := range 4 {
		cluster := fuelFleet(version)
		require.NoError(t, st.PutCluster(ctx, cluster))
		execID := fmt.Sprintf("e%d", version)
		env := func(save bool) *yaqlEnv {
			y, err := newYAQLEnv(ctx, st, cluster, execID, save, newNodeHistory(st, cluster.ID, false))
			require.NoError(t, err)
			return y
		}
		without := env(false)
		without.memo = nil
		want, _ := resolveGraphs(ctx, t, without, cat, gs)
		with := env(true) // keeps the nodes' data for the next execution
		got, steps := resolveGraphs(ctx, t, with, cat, gs)

		require.Equal(t, len(want), len(got))
		for id, w := range want {
			assert.Equal(t, w, got[id], "execution %s, step %s", execID, id)
		}
		conditions := map[string]int{}
		for _, r := range got {
			conditions[r.Condition]++
		}
		assert.Positive(t, conditions[""], "execution %s: conditions that held", execID)
		if version > 0 {
			assert.Positive(t, conditions["false"], "execution %s: change conditions that did not", execID)
			assert.Positive(t, with.memo.Len(), "execution %s: the memo served the nodes", execID)
		}

		// The next execution compares with this one for two tasks in
		// three, with the one before for the others.
		var runs []model.TaskRun
		for i, s := range steps {
			if s.Skipped || isStructural(s.Kind) || (version > 0 && i%3 == 0) {
				continue
			}
			runs = append(runs, model.TaskRun{ClusterID: cluster.ID, NodeID: taskNode(s), TaskID: s.Task, ExecutionID: execID})
		}
		require.NoError(t, st.RecordTaskRuns(ctx, cluster.ID, runs))
	}
}
