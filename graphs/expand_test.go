package graphs

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// expandCluster: two controllers (n1 is also the primary), two computes
// (n4 also stores data).
var expandCluster = []model.Node{
	{ID: "n1", Name: "node-1", Roles: []string{"primary-controller", "controller"}},
	{ID: "n2", Name: "node-2", Roles: []string{"controller"}},
	{ID: "n3", Name: "node-3", Roles: []string{"compute"}},
	{ID: "n4", Name: "node-4", Roles: []string{"compute", "ceph-osd"}},
}

func sh(id string, roles ...string) *model.Task {
	return &model.Task{ID: id, Type: "shell", Roles: roles, Parameters: map[string]any{"cmd": "echo " + id}}
}

func with(t *model.Task, f func(t *model.Task)) *model.Task { f(t); return t }

func stepIDs(steps []*model.Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.ID
	}
	return out
}

// depsOf maps each step to its sorted deps; AnyOf groups are rendered as
// "any(a|b)".
func depsOf(steps []*model.Step) map[string][]string {
	out := map[string][]string{}
	for _, s := range steps {
		deps := slices.Clone(s.Deps)
		for _, g := range s.AnyOf {
			deps = append(deps, "any("+strings.Join(g, "|")+")")
		}
		slices.Sort(deps)
		if len(deps) > 0 {
			out[s.ID] = deps
		}
	}
	return out
}

func TestExpandNodeSelection(t *testing.T) {
	tests := []struct {
		name  string
		tasks []*model.Task
		opts  ExpandOptions
		want  []string
	}{
		{"star is every node", []*model.Task{sh("t", "*")}, ExpandOptions{}, []string{"t@n1", "t@n2", "t@n3", "t@n4"}},
		{"plain role", []*model.Task{sh("t", "compute")}, ExpandOptions{}, []string{"t@n3", "t@n4"}},
		{"several roles, each node once", []*model.Task{sh("t", "controller", "primary-controller", "ceph-osd")}, ExpandOptions{}, []string{"t@n1", "t@n2", "t@n4"}},
		{"regex matches a role from its start", []*model.Task{sh("t", "/.*controller/")}, ExpandOptions{}, []string{"t@n1", "t@n2"}},
		{"regex is anchored at the start like re.match", []*model.Task{sh("t", "/osd/")}, ExpandOptions{}, nil},
		{"regex alternatives", []*model.Task{sh("t", "/primary-controller|ceph-osd/")}, ExpandOptions{}, []string{"t@n1", "t@n4"}},
		{"master is the control plane", []*model.Task{sh("t", "master")}, ExpandOptions{}, []string{"t@master"}},
		{"master and a role", []*model.Task{sh("t", "compute", "master")}, ExpandOptions{}, []string{"t@master", "t@n3", "t@n4"}},
		{"no roles runs on the control plane", []*model.Task{sh("t")}, ExpandOptions{}, []string{"t@master"}},
		{"unknown role selects nothing", []*model.Task{sh("t", "mongo")}, ExpandOptions{}, nil},
		{"stage once on the control plane", []*model.Task{{ID: "deploy_start", Type: "stage", Roles: []string{"*"}}}, ExpandOptions{}, []string{"deploy_start@master"}},
		{
			"groups: the group task's roles",
			[]*model.Task{
				{ID: "controller", Type: "group", Roles: []string{"controller"}},
				with(sh("t"), func(t *model.Task) { t.Groups = []string{"controller"} }),
			},
			ExpandOptions{}, []string{"controller@n1", "controller@n2", "t@n1", "t@n2"},
		},
		{
			"groups and roles add up",
			[]*model.Task{
				{ID: "primary", Type: "group", Roles: []string{"primary-controller"}},
				with(sh("t", "compute"), func(t *model.Task) { t.Groups = []string{"primary"} }),
			},
			ExpandOptions{}, []string{"primary@n1", "t@n1", "t@n3", "t@n4"},
		},
		{
			"group membership by the group's tasks list",
			[]*model.Task{{ID: "storage", Type: "group", Roles: []string{"ceph-osd"}, Tasks: []string{"t"}}, sh("t")},
			ExpandOptions{}, []string{"storage@n4", "t@n4"},
		},
		{"node subset by id and name", []*model.Task{sh("t", "*")}, ExpandOptions{Nodes: []string{"n2", "node-4"}}, []string{"t@n2", "t@n4"}},
		{
			"node subset keeps stages, drops master tasks unless listed",
			[]*model.Task{{ID: "s", Type: "stage"}, sh("m", "master"), sh("t", "*")},
			ExpandOptions{Nodes: []string{"n3"}}, []string{"s@master", "t@n3"},
		},
		{"node subset listing master", []*model.Task{sh("m", "master"), sh("t", "*")}, ExpandOptions{Nodes: []string{"master", "n1"}}, []string{"m@master", "t@n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Expand(&model.Graph{Type: "default", Tasks: tt.tasks}, expandCluster, tt.opts)
			require.NoError(t, err)
			got := stepIDs(steps)
			require.True(t, slices.Equal(got, tt.want), "steps %v, want %v", got, tt.want)
		})
	}
}

func TestExpandStepFields(t *testing.T) {
	g := &model.Graph{Tasks: []*model.Task{
		{ID: "controller", Type: "group", Roles: []string{"controller"}, FaultTolerance: "1"},
		{
			ID: "restart", Type: "shell", Groups: []string{"controller"}, Condition: `settings.debug == true`,
			FailOnError: tBool(false), Strategy: &model.Strategy{Type: "one_by_one"},
			Parameters: map[string]any{"cmd": "systemctl restart api", "retries": int64(3), "timeout": int64(60)},
			Meta:       model.Meta{Timeout: "90s"},
		},
		{ID: "push", Type: "upload_file", Roles: []string{"compute"}, Strategy: &model.Strategy{Type: "parallel", Amount: 3}, Parameters: map[string]any{"path": "/etc/x", "data": "x"}},
		{ID: "apply", Type: "puppet", Roles: []string{"master"}, Strategy: &model.Strategy{Type: "parallel"}, Parameters: map[string]any{"puppet_manifest": "site.pp"}},
		{ID: "raw", Type: "exec", Roles: []string{"master"}, Parameters: map[string]any{"command": "true"}},
		{ID: "start", Type: "stage"},
	}}
	steps, err := Expand(g, expandCluster, ExpandOptions{})
	require.NoError(t, err)
	byID := map[string]*model.Step{}
	for _, s := range steps {
		byID[s.ID] = s
	}
	tests := []struct {
		id   string
		want model.Step
	}{
		{"restart@n2", model.Step{
			ID: "restart@n2", Kind: "exec", Name: "restart", Node: "n2", Task: "restart", Group: "controller",
			Spec:      map[string]any{"command": "systemctl restart api", "timeout": int64(60)},
			Meta:      model.Meta{Retry: 3, Timeout: "90s"},
			Condition: `settings.debug == true`, FailOnError: tBool(false), Strategy: 1,
		}},
		{"push@n3", model.Step{
			ID: "push@n3", Kind: "file", Name: "push", Node: "n3", Task: "push", Strategy: 3,
			Spec: map[string]any{"path": "/etc/x", "content": "x"},
		}},
		{"apply@master", model.Step{
			ID: "apply@master", Kind: "exec", Name: "apply", Task: "apply",
			Spec: map[string]any{"command": "puppet apply --detailed-exitcodes site.pp", "returns": []any{int64(0), int64(2)}, "unchangedReturns": []any{int64(0)}},
		}},
		{"raw@master", model.Step{ID: "raw@master", Kind: "exec", Name: "raw", Task: "raw", Spec: map[string]any{"command": "true"}}},
		{"controller@n1", model.Step{ID: "controller@n1", Kind: "group", Name: "controller", Node: "n1", Task: "controller", Deps: []string{"restart@n1"}}},
		{"start@master", model.Step{ID: "start@master", Kind: "stage", Name: "start", Task: "start"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, ok := byID[tt.id]
			require.True(t, ok, "no step %s in %v", tt.id, stepIDs(steps))
			require.Equal(t, tt.want, *got, "step\n got %+v\nwant %+v", *got, tt.want)
		})
	}
	// Copies do not share their spec.
	byID["restart@n1"].Spec["command"] = "changed"
	require.Equal(t, "systemctl restart api", byID["restart@n2"].Spec["command"], "spec shared between copies or with the task")
	require.Equal(t, "systemctl restart api", g.Tasks[1].Parameters["cmd"], "spec shared between copies or with the task")
}

func TestExpandEdges(t *testing.T) {
	stage := func(id string) *model.Task { return &model.Task{ID: id, Type: "stage"} }
	tests := []struct {
		name  string
		tasks []*model.Task
		opts  ExpandOptions
		want  map[string][]string
	}{
		{
			name:  "requires links the copy on the same node",
			tasks: []*model.Task{with(sh("a", "*"), func(t *model.Task) { t.Requires = []string{"b"} }), sh("b", "*")},
			want:  map[string][]string{"a@n1": {"b@n1"}, "a@n2": {"b@n2"}, "a@n3": {"b@n3"}, "a@n4": {"b@n4"}},
		},
		{
			name:  "requires a task absent on the node: no edge",
			tasks: []*model.Task{with(sh("a", "compute"), func(t *model.Task) { t.Requires = []string{"b"} }), sh("b", "controller", "ceph-osd")},
			want:  map[string][]string{"a@n4": {"b@n4"}},
		},
		{
			name:  "required_for is the reverse on the same node",
			tasks: []*model.Task{with(sh("a", "controller"), func(t *model.Task) { t.RequiredFor = []string{"b"} }), sh("b", "*")},
			want:  map[string][]string{"b@n1": {"a@n1"}, "b@n2": {"a@n2"}},
		},
		{
			name: "requires and required_for a stage link its single copy",
			tasks: []*model.Task{
				stage("deploy_start"), stage("deploy_end"),
				with(sh("a", "compute"), func(t *model.Task) { t.Requires = []string{"deploy_start"}; t.RequiredFor = []string{"deploy_end"} }),
			},
			want: map[string][]string{"a@n3": {"deploy_start@master"}, "a@n4": {"deploy_start@master"}, "deploy_end@master": {"a@n3", "a@n4"}},
		},
		{
			name: "a stage's own requires and required_for reach every copy",
			tasks: []*model.Task{
				with(stage("post"), func(t *model.Task) { t.Requires = []string{"a"}; t.RequiredFor = []string{"b"} }),
				sh("a", "controller"), sh("b", "compute"),
			},
			want: map[string][]string{"post@master": {"a@n1", "a@n2"}, "b@n3": {"post@master"}, "b@n4": {"post@master"}},
		},
		{
			name:  "a master task and a stage on the control plane link directly",
			tasks: []*model.Task{with(sh("m", "master"), func(t *model.Task) { t.Requires = []string{"s"} }), stage("s")},
			want:  map[string][]string{"m@master": {"s@master"}},
		},
		{
			name: "cross_depends all, filtered by role",
			tasks: []*model.Task{
				with(sh("app", "compute"), func(t *model.Task) { t.CrossDepends = []model.CrossDep{{Name: "db", Role: "controller"}} }),
				sh("db", "*"),
			},
			want: map[string][]string{"app@n3": {"db@n1", "db@n2"}, "app@n4": {"db@n1", "db@n2"}},
		},
		{
			name: "cross_depends without role: every copy, including the same node",
			tasks: []*model.Task{
				with(sh("app", "ceph-osd"), func(t *model.Task) { t.CrossDepends = []model.CrossDep{{Name: "db"}} }),
				sh("db", "compute", "primary-controller"),
			},
			want: map[string][]string{"app@n4": {"db@n1", "db@n3", "db@n4"}},
		},
		{
			name: "cross_depends on itself orders the copies without a self edge",
			tasks: []*model.Task{
				with(sh("join", "controller"), func(t *model.Task) {
					t.CrossDepends = []model.CrossDep{{Name: "join", Role: "primary-controller"}}
				}),
			},
			want: map[string][]string{"join@n2": {"join@n1"}},
		},
		{
			name: "cross_depends any: one AnyOf group",
			tasks: []*model.Task{
				with(sh("app", "compute"), func(t *model.Task) {
					t.CrossDepends = []model.CrossDep{{Name: "db", Role: []any{"controller"}, Policy: "any"}}
				}),
				sh("db", "controller"),
			},
			want: map[string][]string{"app@n3": {"any(db@n1|db@n2)"}, "app@n4": {"any(db@n1|db@n2)"}},
		},
		{
			name: "cross_depends name and role as regex",
			tasks: []*model.Task{
				with(sh("app", "compute"), func(t *model.Task) {
					t.CrossDepends = []model.CrossDep{{Name: "/db-/", Role: "/primary-/"}}
				}),
				sh("db-a", "*"), sh("db-b", "controller"), sh("xdb-c", "*"),
			},
			want: map[string][]string{"app@n3": {"db-a@n1", "db-b@n1"}, "app@n4": {"db-a@n1", "db-b@n1"}},
		},
		{
			name: "cross_depends role list with master and self",
			tasks: []*model.Task{
				with(sh("app", "compute"), func(t *model.Task) {
					t.CrossDepends = []model.CrossDep{{Name: "prep", Role: []string{"self", "master"}}}
				}),
				sh("prep", "*", "master"),
			},
			want: map[string][]string{"app@n3": {"prep@master", "prep@n3"}, "app@n4": {"prep@master", "prep@n4"}},
		},
		{
			name: "cross_depended_by all",
			tasks: []*model.Task{
				with(sh("db", "controller"), func(t *model.Task) { t.CrossDependedBy = []model.CrossDep{{Name: "app", Role: "ceph-osd"}} }),
				sh("app", "compute"),
			},
			want: map[string][]string{"app@n4": {"db@n1", "db@n2"}},
		},
		{
			name: "cross_depended_by any",
			tasks: []*model.Task{
				with(sh("db", "controller"), func(t *model.Task) {
					t.CrossDependedBy = []model.CrossDep{{Name: "app", Policy: "any"}}
				}),
				sh("app", "compute"),
			},
			want: map[string][]string{"app@n3": {"any(db@n1|db@n2)"}, "app@n4": {"any(db@n1|db@n2)"}},
		},
		{
			name: "group waits for its members; members inherit the group's deps",
			tasks: []*model.Task{
				stage("deploy_start"),
				{ID: "primary", Type: "group", Roles: []string{"primary-controller"}, Requires: []string{"deploy_start"}},
				{ID: "controllers", Type: "group", Roles: []string{"controller"}, Requires: []string{"primary"}},
				with(sh("db"), func(t *model.Task) { t.Groups = []string{"primary"} }),
				with(sh("api"), func(t *model.Task) { t.Groups = []string{"controllers"} }),
			},
			want: map[string][]string{
				"primary@n1":     {"db@n1", "deploy_start@master"},
				"db@n1":          {"deploy_start@master"},
				"controllers@n1": {"api@n1", "primary@n1"},
				"controllers@n2": {"api@n2", "primary@n1"},
				"api@n1":         {"primary@n1"},
				"api@n2":         {"primary@n1"},
			},
		},
		{
			name: "a task in two groups of one node runs in the first, without a cycle",
			tasks: []*model.Task{
				{ID: "primary", Type: "group", Roles: []string{"primary-controller"}},
				{ID: "controllers", Type: "group", Roles: []string{"controller"}, Requires: []string{"primary"}},
				with(sh("hosts"), func(t *model.Task) { t.Groups = []string{"primary", "controllers"} }),
			},
			want: map[string][]string{
				"primary@n1":     {"hosts@n1"},
				"controllers@n1": {"primary@n1"},
				"controllers@n2": {"hosts@n2", "primary@n1"},
				"hosts@n2":       {"primary@n1"},
			},
		},
		{
			name: "a task requiring a group on a node without it waits for every copy",
			tasks: []*model.Task{
				{ID: "controllers", Type: "group", Roles: []string{"controller"}},
				with(sh("agent", "compute"), func(t *model.Task) { t.Requires = []string{"controllers"} }),
			},
			want: map[string][]string{"agent@n3": {"controllers@n1", "controllers@n2"}, "agent@n4": {"controllers@n1", "controllers@n2"}},
		},
		{
			name: "node subset drops edges to unselected nodes",
			tasks: []*model.Task{
				with(sh("app", "compute"), func(t *model.Task) { t.CrossDepends = []model.CrossDep{{Name: "db", Role: "controller"}} }),
				sh("db", "*"),
			},
			opts: ExpandOptions{Nodes: []string{"n2", "n3"}},
			want: map[string][]string{"app@n3": {"db@n2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Expand(&model.Graph{Tasks: tt.tasks}, expandCluster, tt.opts)
			require.NoError(t, err)
			got := depsOf(steps)
			require.Equal(t, tt.want, got, "deps\n got %v\nwant %v", got, tt.want)
		})
	}
}

func TestExpandSkipped(t *testing.T) {
	tasks := []*model.Task{
		with(sh("a", "controller"), func(t *model.Task) { t.Requires = []string{"b"} }),
		with(sh("b", "controller"), func(t *model.Task) { t.Requires = []string{"c"} }),
		sh("c", "controller"),
		{ID: "off", Type: "skipped", Roles: []string{"compute"}, RequiredFor: []string{"d"}},
		sh("d", "compute"),
	}
	tests := []struct {
		name    string
		opts    ExpandOptions
		skipped []string
	}{
		{"type skipped", ExpandOptions{}, []string{"off@n3", "off@n4"}},
		{"task subset: unlisted tasks are skipped, edges kept", ExpandOptions{Tasks: []string{"a", "c", "d"}}, []string{"b@n1", "b@n2", "off@n3", "off@n4"}},
	}
	wantDeps := map[string][]string{
		"a@n1": {"b@n1"}, "a@n2": {"b@n2"}, "b@n1": {"c@n1"}, "b@n2": {"c@n2"}, "d@n3": {"off@n3"}, "d@n4": {"off@n4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Expand(&model.Graph{Tasks: tasks}, expandCluster, tt.opts)
			require.NoError(t, err)
			var skipped []string
			for _, s := range steps {
				if s.Skipped {
					skipped = append(skipped, s.ID)
					require.Equal(t, model.TaskSkipped, s.Kind, "skipped step %s: kind %q spec %v", s.ID, s.Kind, s.Spec)
					assert.Nil(t, s.Spec, "skipped step %s: kind %q spec %v", s.ID, s.Kind, s.Spec)
				} else if s.Kind != "exec" {
					t.Errorf("step %s: kind %q", s.ID, s.Kind)
				}
			}
			require.True(t, slices.Equal(skipped, tt.skipped), "skipped %v, want %v", skipped, tt.skipped)
			got := depsOf(steps)
			require.Equal(t, wantDeps, got, "deps\n got %v\nwant %v", got, wantDeps)
		})
	}
}

func TestExpandErrors(t *testing.T) {
	pos := model.Position{Source: "tasks.yaml", Line: 12, Column: 3}
	tests := []struct {
		name  string
		tasks []*model.Task
		opts  ExpandOptions
		want  []string
	}{
		{
			"missing cross dependency refused, missing requires, required_for and groups dropped",
			[]*model.Task{
				{ID: "a", Type: "shell", Pos: pos, Roles: []string{"*"}, Requires: []string{"nope"}, RequiredFor: []string{"gone"},
					CrossDepends: []model.CrossDep{{Name: "missing"}}, Groups: []string{"nogroup"}},
			},
			ExpandOptions{},
			[]string{`tasks.yaml:12:3: task "a": cross_depends[0]: no task "missing"`},
		},
		{"group member missing", []*model.Task{{ID: "g", Type: "group", Tasks: []string{"ghost"}}}, ExpandOptions{}, []string{`task "g": tasks: no task "ghost"`}},
		{"unknown type with suggestion", []*model.Task{{ID: "a", Type: "shel"}}, ExpandOptions{}, []string{`unknown task type "shel"; did you mean "shell"?`}},
		{"bad role regex", []*model.Task{sh("a", "/[/")}, ExpandOptions{}, []string{`roles: invalid regular expression /[/`}},
		{"bad policy", []*model.Task{with(sh("a", "*"), func(t *model.Task) { t.CrossDepends = []model.CrossDep{{Name: "a", Policy: "some"}} })}, ExpandOptions{}, []string{`unknown policy "some"`}},
		{"bad cross role", []*model.Task{with(sh("a", "*"), func(t *model.Task) { t.CrossDepends = []model.CrossDep{{Name: "a", Role: 3}} })}, ExpandOptions{}, []string{`role: expected a string or a list`}},
		{"duplicate task", []*model.Task{sh("a"), sh("a")}, ExpandOptions{}, []string{`task "a": defined twice`}},
		{"unknown node and task in subsets", []*model.Task{sh("a")}, ExpandOptions{Nodes: []string{"n9"}, Tasks: []string{"zz"}}, []string{`nodes: unknown node "n9"`, `tasks: unknown task "zz"`}},
		{
			"cycle names its steps",
			[]*model.Task{with(sh("a", "compute"), func(t *model.Task) { t.Requires = []string{"b"} }), with(sh("b", "compute"), func(t *model.Task) { t.Requires = []string{"a"} })},
			ExpandOptions{},
			[]string{"dependency cycles: a@n3 -> b@n3 -> a@n3; a@n4 -> b@n4 -> a@n4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Expand(&model.Graph{Tasks: tt.tasks}, expandCluster, tt.opts)
			require.Error(t, err, "no error")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w, "error %q lacks %q", err, w)
			}
		})
	}
}

func TestBadNodes(t *testing.T) {
	tests := []struct {
		name  string
		nodes []model.Node
		want  string
	}{
		{"no id nor name", []model.Node{{Roles: []string{"x"}}}, "node 0 has neither id nor name"},
		{"named master", []model.Node{{ID: "n1"}, {ID: "master"}}, `node 1: "master" is the control plane's name`},
		{"duplicate", []model.Node{{ID: "n1", Name: "a"}, {ID: "n2", Name: "n1"}}, `nodes 0 and 1 are both "n1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Expand(&model.Graph{Tasks: []*model.Task{sh("a", "*")}}, tt.nodes, ExpandOptions{})
			require.Error(t, err, "Expand err = %v, want %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "Expand err = %v, want %q", err, tt.want)
			_, err = BuildPackage(&model.Package{Resources: []*model.Resource{res("exec", "x", nil)}}, nil, tt.nodes)
			require.Error(t, err, "BuildPackage err = %v, want %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "BuildPackage err = %v, want %q", err, tt.want)
		})
	}
}

func TestExpandCycleIsCycleError(t *testing.T) {
	tasks := []*model.Task{with(sh("a", "compute"), func(t *model.Task) { t.Requires = []string{"b"} }), with(sh("b", "compute"), func(t *model.Task) { t.RequiredFor = []string{"a"}; t.Requires = []string{"a"} })}
	_, err := Expand(&model.Graph{Tasks: tasks}, expandCluster, ExpandOptions{})
	var ce *dag.CycleError
	require.ErrorAs(t, err, &ce, "err = %v", err)
	require.Len(t, ce.Cycles, 2, "err = %v", err)
}

func TestSort(t *testing.T) {
	tasks := []*model.Task{
		{ID: "deploy_start", Type: "stage"},
		with(sh("db", "primary-controller"), func(t *model.Task) { t.Requires = []string{"deploy_start"} }),
		with(sh("api", "controller"), func(t *model.Task) {
			t.Requires = []string{"deploy_start"}
			t.CrossDepends = []model.CrossDep{{Name: "db", Policy: "any"}}
		}),
		with(sh("agent", "compute"), func(t *model.Task) { t.CrossDepends = []model.CrossDep{{Name: "api", Role: "controller"}} }),
	}
	steps, err := Expand(&model.Graph{Tasks: tasks}, expandCluster, ExpandOptions{})
	require.NoError(t, err)
	layers, err := Sort(steps)
	require.NoError(t, err)
	var got [][]string
	for _, l := range layers {
		got = append(got, stepIDs(l))
	}
	want := [][]string{{"deploy_start@master"}, {"db@n1"}, {"api@n1", "api@n2"}, {"agent@n3", "agent@n4"}}
	require.Equal(t, want, got, "layers")

	t.Run("unknown dependency", func(t *testing.T) {
		_, err := Sort([]*model.Step{{ID: "a", Deps: []string{"b"}}})
		require.Error(t, err)
		require.Contains(t, err.Error(), `step "a" depends on unknown step "b"`, "err = %v", err)
	})
	t.Run("unknown AnyOf member", func(t *testing.T) {
		_, err := Sort([]*model.Step{{ID: "a", AnyOf: [][]string{{"b"}}}})
		require.Error(t, err)
		require.Contains(t, err.Error(), `unknown step "b"`, "err = %v", err)
	})
	t.Run("duplicate step", func(t *testing.T) {
		_, err := Sort([]*model.Step{{ID: "a"}, {ID: "a"}})
		require.Error(t, err)
		require.Contains(t, err.Error(), `duplicate step "a"`, "err = %v", err)
	})
	t.Run("cycle", func(t *testing.T) {
		_, err := Sort([]*model.Step{{ID: "a", Deps: []string{"b"}}, {ID: "b", AnyOf: [][]string{{"a"}}}})
		var ce *dag.CycleError
		require.ErrorAs(t, err, &ce, "err = %v", err)
		require.Equal(t, "a -> b -> a", dag.FormatCycle(ce.Cycles[0]), "err = %v", err)
	})
}

func TestExpandDoesNotModifyGraph(t *testing.T) {
	mk := func() *model.Graph {
		return &model.Graph{Tasks: []*model.Task{
			{ID: "g", Type: "group", Roles: []string{"controller"}},
			with(sh("a", "*"), func(t *model.Task) { t.Groups = []string{"g"}; t.Parameters["env"] = map[string]any{"A": "1"} }),
		}}
	}
	g, pristine := mk(), mk()
	steps, err := Expand(g, expandCluster, ExpandOptions{})
	require.NoError(t, err)
	for _, s := range steps {
		if s.Spec != nil {
			s.Spec["env"].(map[string]any)["A"] = "changed"
		}
	}
	require.Equal(t, pristine, g, "graph modified")
}
