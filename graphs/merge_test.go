package graphs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func tBool(b bool) *bool { return &b }

func relLayer(tasks ...*model.Task) LayerGraph {
	return LayerGraph{Layer: model.LayerRelease, Owner: "rel-1", Graph: &model.Graph{Type: "default", Tasks: tasks}}
}

func cluLayer(tasks ...*model.Task) LayerGraph {
	return LayerGraph{Layer: model.LayerCluster, Owner: "cl-1", Graph: &model.Graph{Type: "default", Tasks: tasks}}
}

func plugLayer(owner string, tasks ...*model.Task) LayerGraph {
	return LayerGraph{Layer: model.LayerPlugin, Owner: owner, Graph: &model.Graph{Type: "default", Tasks: tasks}}
}

// stripMergeOrigin clears the fields Merge fills from the layer, to compare
// task content only.
func stripMergeOrigin(g *model.Graph) *model.Graph {
	for _, t := range g.Tasks {
		t.Layer, t.Owner, t.Pos = "", "", model.Position{}
	}
	return g
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name    string
		layers  []LayerGraph
		want    []*model.Task
		wantErr []string // substrings, all of which must appear
	}{
		{
			name:   "single layer is copied",
			layers: []LayerGraph{relLayer(&model.Task{ID: "a", Type: "shell", Roles: []string{"*"}, Parameters: map[string]any{"cmd": "true"}})},
			want:   []*model.Task{{ID: "a", Type: "shell", Roles: []string{"*"}, Parameters: map[string]any{"cmd": "true"}}},
		},
		{
			name: "later layer replaces scalar fields and whole lists",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Version: "2.0.0", Roles: []string{"controller", "compute"}, Requires: []string{"x", "y"}, Condition: "true"}),
				cluLayer(&model.Task{ID: "a", Roles: []string{"compute"}, Condition: "false"}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Version: "2.0.0", Roles: []string{"compute"}, Requires: []string{"x", "y"}, Condition: "false"}},
		},
		{
			name: "order is release, cluster, plugins whatever the argument order",
			layers: []LayerGraph{
				plugLayer("p1", &model.Task{ID: "a", Condition: "plugin"}),
				cluLayer(&model.Task{ID: "a", Condition: "cluster", Version: "c"}),
				relLayer(&model.Task{ID: "a", Type: "shell", Condition: "release", Version: "r", FaultTolerance: "1"}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Condition: "plugin", Version: "c", FaultTolerance: "1"}},
		},
		{
			name: "plugins apply in the order given",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell"}),
				plugLayer("p2", &model.Task{ID: "b", Type: "shell"}),
				plugLayer("p1", &model.Task{ID: "c", Type: "shell"}),
			},
			want: []*model.Task{{ID: "a", Type: "shell"}, {ID: "b", Type: "shell"}, {ID: "c", Type: "shell"}},
		},
		{
			name: "output is first-seen order of ids across layers",
			layers: []LayerGraph{
				cluLayer(&model.Task{ID: "c", Type: "shell"}, &model.Task{ID: "a", Condition: "x"}),
				relLayer(&model.Task{ID: "b", Type: "shell"}, &model.Task{ID: "a", Type: "shell"}),
			},
			want: []*model.Task{{ID: "b", Type: "shell"}, {ID: "a", Type: "shell", Condition: "x"}, {ID: "c", Type: "shell"}},
		},
		{
			name: "parameters merge key by key, recursively; lists replaced",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Parameters: map[string]any{
					"cmd": "old", "timeout": int64(60), "env": map[string]any{"A": "1", "B": "2", "deep": map[string]any{"x": 1, "y": 2}}, "list": []any{1, 2},
				}}),
				cluLayer(&model.Task{ID: "a", Parameters: map[string]any{
					"cmd": "new", "env": map[string]any{"B": "two", "C": "3", "deep": map[string]any{"y": 20}}, "list": []any{3},
				}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Parameters: map[string]any{
				"cmd": "new", "timeout": int64(60), "env": map[string]any{"A": "1", "B": "two", "C": "3", "deep": map[string]any{"x": 1, "y": 20}}, "list": []any{3},
			}}},
		},
		{
			name: "nil inside parameters removes that key, at any depth",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Parameters: map[string]any{"cmd": "c", "timeout": 5, "env": map[string]any{"A": "1", "B": "2"}}}),
				cluLayer(&model.Task{ID: "a", Parameters: map[string]any{"timeout": nil, "env": map[string]any{"A": nil}}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Parameters: map[string]any{"cmd": "c", "env": map[string]any{"B": "2"}}}},
		},
		{
			name: "nil parameters in the first layer that has them mean absent",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Parameters: map[string]any{"cmd": "c", "gone": nil, "m": map[string]any{"k": nil}}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Parameters: map[string]any{"cmd": "c", "m": map[string]any{}}}},
		},
		{
			name: "explicit null removes top-level fields",
			layers: []LayerGraph{
				relLayer(&model.Task{
					ID: "a", Type: "shell", Version: "1", Roles: []string{"r"}, Groups: []string{"g"}, Tasks: []string{"t"}, Requires: []string{"x"},
					RequiredFor: []string{"y"}, CrossDepends: []model.CrossDep{{Name: "z"}}, CrossDependedBy: []model.CrossDep{{Name: "w"}},
					Condition: "c", FailOnError: tBool(false), Strategy: &model.Strategy{Type: "one_by_one"}, FaultTolerance: "1",
					Parameters: map[string]any{"cmd": "c"}, Meta: model.Meta{Retry: 2}, Extra: map[string]any{"reexecute_on": []any{"deploy_changes"}, "keep": "me"},
				}),
				cluLayer(&model.Task{ID: "a", Nulls: []string{
					"version", "roles", "groups", "tasks", "requires", "required_for", "cross_depends", "cross_depended_by",
					"condition", "fail_on_error", "strategy", "fault_tolerance", "parameters", "meta", "reexecute_on",
				}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Extra: map[string]any{"keep": "me"}}},
		},
		{
			name: "null then set again in a later layer",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Condition: "c1"}),
				cluLayer(&model.Task{ID: "a", Nulls: []string{"condition"}}),
				plugLayer("p", &model.Task{ID: "a", Condition: "c3"}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Condition: "c3"}},
		},
		{
			name: "type skipped disables the task and keeps its merged edges",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "puppet", Requires: []string{"x"}, RequiredFor: []string{"y"}, CrossDepends: []model.CrossDep{{Name: "z", Role: "controller"}}}),
				cluLayer(&model.Task{ID: "a", Type: "skipped", RequiredFor: []string{"y", "w"}}),
			},
			want: []*model.Task{{ID: "a", Type: "skipped", Requires: []string{"x"}, RequiredFor: []string{"y", "w"}, CrossDepends: []model.CrossDep{{Name: "z", Role: "controller"}}}},
		},
		{
			name: "fail_on_error false overrides the default; strategy replaced whole; meta field by field",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", FailOnError: tBool(true), Strategy: &model.Strategy{Type: "parallel", Amount: 3}, Meta: model.Meta{Retry: 2, Timeout: "10s"}}),
				cluLayer(&model.Task{ID: "a", FailOnError: tBool(false), Strategy: &model.Strategy{Type: "one_by_one"}, Meta: model.Meta{Delay: "1s", Timeout: "20s"}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", FailOnError: tBool(false), Strategy: &model.Strategy{Type: "one_by_one"}, Meta: model.Meta{Retry: 2, Delay: "1s", Timeout: "20s"}}},
		},
		{
			name: "explicit empty list overrides",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Requires: []string{"x"}}),
				cluLayer(&model.Task{ID: "a", Requires: []string{}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Requires: []string{}}},
		},
		{
			name: "extra fields merge key by key",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell", Extra: map[string]any{"test_pre": map[string]any{"cmd": "x"}, "refresh_on": []any{"a"}}}),
				cluLayer(&model.Task{ID: "a", Extra: map[string]any{"refresh_on": []any{"b"}, "custom": true}}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Extra: map[string]any{"test_pre": map[string]any{"cmd": "x"}, "refresh_on": []any{"b"}, "custom": true}}},
		},
		{
			name: "plugin overriding a release and a cluster task is fine",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell"}),
				cluLayer(&model.Task{ID: "b", Type: "shell"}),
				plugLayer("p1", &model.Task{ID: "a", Condition: "p1"}, &model.Task{ID: "b", Condition: "p1"}),
			},
			want: []*model.Task{{ID: "a", Type: "shell", Condition: "p1"}, {ID: "b", Type: "shell", Condition: "p1"}},
		},
		{
			name: "two plugins defining the same task id",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell"}),
				plugLayer("lma", &model.Task{ID: "a", Condition: "1"}, &model.Task{ID: "hook", Type: "shell"}),
				plugLayer("contrail", &model.Task{ID: "hook", Type: "shell"}),
			},
			wantErr: []string{`task "hook" is defined by both plugin "lma" and plugin "contrail"`},
		},
		{
			name: "every error reported at once",
			layers: []LayerGraph{
				relLayer(&model.Task{ID: "a", Type: "shell"}, &model.Task{ID: "a", Type: "shell"}, &model.Task{Type: "shell"}),
				cluLayer(&model.Task{ID: "a", Nulls: []string{"type"}}),
				{Layer: "galaxy", Owner: "x", Graph: &model.Graph{}},
			},
			wantErr: []string{
				`unknown layer "galaxy"`,
				`release "rel-1" defines task "a" twice`,
				`release "rel-1": task 2 has no id`,
				`cluster "cl-1": task "a": type cannot be removed`,
			},
		},
		{
			name:   "nil graphs are skipped",
			layers: []LayerGraph{relLayer(&model.Task{ID: "a", Type: "shell"}), {Layer: model.LayerCluster, Owner: "c"}},
			want:   []*model.Task{{ID: "a", Type: "shell"}},
		},
		{
			name: "no layers: empty graph",
			want: []*model.Task{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Merge("default", tt.layers...)
			if tt.wantErr != nil {
				require.Error(t, err, "no error; graph %+v", g)
				for _, s := range tt.wantErr {
					assert.Contains(t, err.Error(), s, "error %q lacks %q", err, s)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, "default", g.Type, "type")
			got := stripMergeOrigin(g).Tasks
			require.Equal(t, tt.want, got, "tasks:\n got %s\nwant %s", dumpMergedTasks(got), dumpMergedTasks(tt.want))
		})
	}
}

func dumpMergedTasks(ts []*model.Task) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString("\n  ")
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(strings.Join(strings.Fields(sprintMergedTask(t)), " ")), "\n", " "))
	}
	return b.String()
}

func sprintMergedTask(t *model.Task) string {
	out, err := MarshalGraph(&model.Graph{Type: "x", Tasks: []*model.Task{t}}, "json")
	if err != nil {
		return err.Error()
	}
	return string(out)
}

func TestMergeRecordsWinningLayerAndOwner(t *testing.T) {
	g, err := Merge("upgrade",
		relLayer(&model.Task{ID: "a", Type: "shell", Pos: model.Position{Source: "rel.yaml", Line: 3}}, &model.Task{ID: "b", Type: "shell"}),
		cluLayer(&model.Task{ID: "b", Condition: "x", Pos: model.Position{Source: "cl.yaml", Line: 7}}),
		plugLayer("p9", &model.Task{ID: "c", Type: "shell"}),
	)
	require.NoError(t, err)
	want := []struct {
		layer model.Layer
		owner string
		pos   model.Position
	}{
		{model.LayerRelease, "rel-1", model.Position{Source: "rel.yaml", Line: 3}},
		{model.LayerCluster, "cl-1", model.Position{Source: "cl.yaml", Line: 7}},
		{model.LayerPlugin, "p9", model.Position{}},
	}
	require.Equal(t, "upgrade", g.Type, "type")
	for i, w := range want {
		tk := g.Tasks[i]
		require.Equal(t, w.layer, tk.Layer, "task %s: layer %q owner %q pos %v, want %+v", tk.ID, tk.Layer, tk.Owner, tk.Pos, w)
		require.Equal(t, w.owner, tk.Owner, "task %s: layer %q owner %q pos %v, want %+v", tk.ID, tk.Layer, tk.Owner, tk.Pos, w)
		assert.Equal(t, w.pos, tk.Pos, "task %s: layer %q owner %q pos %v, want %+v", tk.ID, tk.Layer, tk.Owner, tk.Pos, w)
		assert.Nil(t, tk.Nulls, "task %s keeps Nulls %v", tk.ID, tk.Nulls)
	}
}

func TestMergeDoesNotModifyInputs(t *testing.T) {
	mk := func() []LayerGraph {
		return []LayerGraph{
			relLayer(&model.Task{ID: "a", Type: "shell", Roles: []string{"r"}, Parameters: map[string]any{"env": map[string]any{"A": "1"}, "l": []any{1}},
				CrossDepends: []model.CrossDep{{Name: "x", Role: []any{"a", "b"}}}, Strategy: &model.Strategy{Type: "parallel", Amount: 2}, Extra: map[string]any{"e": map[string]any{"k": 1}}}),
			cluLayer(&model.Task{ID: "a", Parameters: map[string]any{"env": map[string]any{"A": nil, "B": "2"}}, Nulls: []string{"roles"}, Extra: map[string]any{"e": nil}}),
		}
	}
	in, pristine := mk(), mk()
	g, err := Merge("", in...)
	require.NoError(t, err)
	require.Equal(t, model.DefaultGraphType, g.Type, "type")
	// Mutate the result deeply; the inputs must not change.
	g.Tasks[0].Parameters["env"].(map[string]any)["Z"] = "z"
	g.Tasks[0].Parameters["l"].([]any)[0] = 99
	g.Tasks[0].CrossDepends[0].Role.([]any)[0] = "changed"
	g.Tasks[0].Strategy.Amount = 7
	require.Equal(t, pristine, in, "inputs changed:\n%s\n%s", dumpMergedTasks(in[0].Graph.Tasks), dumpMergedTasks(pristine[0].Graph.Tasks))
	_, ok := g.Tasks[0].Extra["e"]
	require.False(t, ok, "extra e not removed by nil: %v", g.Tasks[0].Extra)
}

func TestMergeGraphName(t *testing.T) {
	a := relLayer(&model.Task{ID: "a", Type: "shell"})
	a.Graph.Name = "Release graph"
	b := cluLayer()
	b.Graph.Name = "Cluster graph"
	c := plugLayer("p")
	g, err := Merge("default", c, b, a)
	require.NoError(t, err)
	require.Equal(t, "Cluster graph", g.Name, "name")
}

func TestMergeIsDeterministic(t *testing.T) {
	layers := []LayerGraph{
		relLayer(&model.Task{ID: "z", Type: "shell"}, &model.Task{ID: "m", Type: "shell", Parameters: map[string]any{"a": 1, "b": map[string]any{"c": 2}}}),
		cluLayer(&model.Task{ID: "a", Type: "shell"}, &model.Task{ID: "m", Parameters: map[string]any{"b": map[string]any{"d": 3}}}),
		plugLayer("p", &model.Task{ID: "q", Type: "stage"}),
	}
	first, err := Merge("default", layers...)
	require.NoError(t, err)
	want, _ := MarshalGraph(first, "yaml")
	for range 20 {
		g, err := Merge("default", layers...)
		require.NoError(t, err)
		got, _ := MarshalGraph(g, "yaml")
		require.Equal(t, string(want), string(got), "merge output differs:\n%s\n---\n%s", got, want)
	}
}
