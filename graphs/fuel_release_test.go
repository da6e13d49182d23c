package graphs

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/fuellab"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/yaql"
)

// fuelLab is a Fuel cluster of eight nodes (primary-controller, two
// controllers, two computes, two Ceph OSDs, a cinder node) with settings
// in Fuel's editable form, enough for every yaql condition, amount and
// cross dependency of fuel-library's release graph.
func fuelLab() *model.Cluster {
	settings := fuellab.Settings()
	roles := [][]string{{"primary-controller"}, {"controller"}, {"controller"}, {"compute"}, {"compute"}, {"ceph-osd"}, {"ceph-osd"}, {"cinder"}}
	// Fuel 9's role metadata: the tags each role stands for.
	tags := map[string][]any{
		"primary-controller": {"primary-controller", "primary-rabbitmq", "primary-database", "primary-keystone", "primary-neutron"},
		"controller":         {"controller", "rabbitmq", "database", "keystone", "neutron"},
	}
	c := &model.Cluster{ID: "env-1", Name: "Fuel lab", Settings: settings}
	for i, r := range roles {
		id := fmt.Sprint(i + 1)
		ip := fmt.Sprintf("10.20.0.%d", i+3)
		attrs := map[string]any{
			"fqdn":          "node-" + id + ".domain.tld",
			"network_roles": map[string]any{"mgmt/messaging": ip, "mgmt/database": ip, "ex": nil},
			"node_volumes":  []any{map[string]any{"id": "sda", "size": 10240}},
			"network_scheme": map[string]any{
				"version":         "1.1",
				"transformations": []any{map[string]any{"action": "add-br", "name": "br-mgmt"}},
				"endpoints":       map[string]any{"br-mgmt": map[string]any{"IP": []any{ip + "/24"}}},
			},
		}
		if tg, ok := tags[r[0]]; ok {
			attrs["tags"] = tg
		}
		c.Nodes = append(c.Nodes, model.Node{ID: id, Name: "node-" + id, Roles: r, Attributes: attrs})
	}
	return c
}

// fuelEval evaluates expressions per node as an execution does: against
// the node's deployment data, with no earlier run.
type fuelEval struct {
	t     *testing.T
	c     *model.Cluster
	cd    *yaql.ClusterDeployment
	nodes map[string]yaql.Input
	evals int
}

func newFuelEval(t *testing.T, c *model.Cluster) *fuelEval {
	cd, err := yaql.NewClusterDeployment(c, nil)
	require.NoError(t, err)
	return &fuelEval{t: t, c: c, cd: cd, nodes: map[string]yaql.Input{}}
}

func (f *fuelEval) input(node string) yaql.Input {
	if in, ok := f.nodes[node]; ok {
		return in
	}
	n := f.c.Node(node)
	if n == nil {
		n = &model.Node{ID: node, Name: node, Roles: []string{model.ControlPlane}}
	}
	d, err := f.cd.Node(n)
	require.NoError(f.t, err)
	f.nodes[node] = d.Input(nil)
	return f.nodes[node]
}

func (f *fuelEval) crossDeps(t *model.Task, field, src, node string) (any, error) {
	x, err := yaql.Parse(src)
	if err != nil {
		return nil, err
	}
	f.evals++
	return x.Eval(f.input(node))
}

// TestFuelLibraryReleaseExpands expands fuel-library's release graph on an
// eight-node cluster: every condition, amount and cross dependency written
// in yaql or the legacy syntax evaluates on every node it applies to, each
// node gets its roles' tasks, the yaql cross dependencies make edges, the
// group strategies hold and there is no cycle.
func TestFuelLibraryReleaseExpands(t *testing.T) {
	docs, err := Parse(Options{Catalogue: fuelCatalogue(t)}, fuelLibraryGraphs(t)["release"]...)
	require.NoError(t, err)
	g := docs.Graphs[0]
	c := fuelLab()
	ev := newFuelEval(t, c)
	steps, err := Expand(g, c.Nodes, ExpandOptions{Catalogue: fuelCatalogue(t), CrossDeps: ev.crossDeps})
	require.NoError(t, err)
	_, err = Sort(steps)
	require.NoError(t, err, "no cycle")

	byID := map[string]*model.Step{}
	tasks := map[string]*model.Task{}
	for _, task := range g.Tasks {
		tasks[task.ID] = task
	}
	conditions := 0
	for _, s := range steps {
		byID[s.ID] = s
		node := nodeName(s.Node)
		if s.Node == "" {
			node = s.ID[strings.LastIndexByte(s.ID, '@')+1:]
		}
		if src, ok := yaql.Untag(s.Condition); ok || yaql.IsLegacy(s.Condition) {
			parse := yaql.Parse
			if !ok {
				src, parse = s.Condition, yaql.ParseLegacy
			}
			x, err := parse(src)
			require.NoError(t, err, s.ID)
			_, err = x.Bool(ev.input(node))
			assert.NoError(t, err, "condition of %s", s.ID)
			conditions++
		}
		if st := tasks[s.Task].Strategy; st != nil && st.AmountYAQL != "" {
			x, err := yaql.Parse(st.AmountYAQL)
			require.NoError(t, err)
			v, err := x.Eval(ev.input(node))
			require.NoError(t, err, "amount of %s", s.ID)
			n, ok := v.(int64)
			assert.True(t, ok && n > 0 && n < math.MaxInt32, "amount of %s: %v", s.ID, v)
		}
	}
	assert.Greater(t, conditions, 500, "conditions evaluated")
	assert.Positive(t, ev.evals)
	assert.Equal(t, yaqlCopies(g, steps), ev.evals, "each yaql cross dependency evaluated on each node of its task")

	has := func(id string) bool { _, ok := byID[id]; return ok }
	depends := func(from, to string) bool {
		s := byID[from]
		return s != nil && slices.Contains(s.Deps, to)
	}
	// Each node gets its roles' tasks.
	assert.True(t, has("primary-cluster@1"))
	for _, id := range []string{"primary-cluster@2", "cluster@4", "cluster@6", "cluster@8"} {
		assert.False(t, has(id), id)
	}
	for _, id := range []string{"cluster@2", "cluster@3", "top-role-compute@4", "top-role-compute@5", "top-role-ceph-osd@6", "top-role-ceph-osd@7", "top-role-cinder@8"} {
		assert.True(t, has(id), id)
	}
	assert.False(t, has("top-role-compute@1"))
	// fuel_pkgs is in every group ('/.*/'), so on every node.
	for i := 1; i <= 8; i++ {
		assert.True(t, has(fmt.Sprintf("fuel_pkgs@%d", i)), "fuel_pkgs on node %d", i)
	}
	// cluster's yaql cross-depends: a controller waits for primary-cluster
	// on the primary controller.
	assert.True(t, depends("cluster@2", "primary-cluster@1"))
	assert.True(t, depends("cluster@3", "primary-cluster@1"))
	// netconfig's: a compute waits for virtual_ips on the controllers,
	// which hold the vrouter VIP; a controller does not.
	for _, ctl := range []string{"1", "2", "3"} {
		assert.True(t, depends("netconfig@4", "virtual_ips@"+ctl), "netconfig@4 -> virtual_ips@%s", ctl)
		assert.False(t, depends("netconfig@"+ctl, "virtual_ips@1"))
	}
	// Group strategies: the primary controller one by one, controllers six
	// at a time.
	assert.Equal(t, 1, byID["primary-controller@1"].Strategy)
	assert.Equal(t, 6, byID["controller@2"].Strategy)
	// A group named literally is the copy's group; '/.*/' only places it.
	assert.Equal(t, "controller", byID["virtual_ips@2"].Group)
	assert.Equal(t, "primary-controller", byID["virtual_ips@1"].Group)
	assert.Empty(t, byID["fuel_pkgs@4"].Group)
}

// yaqlCopies is the number of evaluations the yaql cross dependencies
// need: one per field per copy of its task.
func yaqlCopies(g *model.Graph, steps []*model.Step) int {
	per := map[string]int{}
	for _, task := range g.Tasks {
		if task.CrossDependsYAQL != "" {
			per[task.ID]++
		}
		if task.CrossDependedByYAQL != "" {
			per[task.ID]++
		}
	}
	n := 0
	for _, s := range steps {
		n += per[s.Task]
	}
	return n
}
