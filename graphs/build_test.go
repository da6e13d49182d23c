package graphs

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

func res(kind, name string, spec map[string]any, f ...func(r *model.Resource)) *model.Resource {
	r := &model.Resource{APIVersion: model.APIVersion, Kind: kind, Name: name, Spec: spec}
	for _, fn := range f {
		fn(r)
	}
	return r
}

func dependsOn(refs ...string) func(r *model.Resource) {
	return func(r *model.Resource) {
		for _, s := range refs {
			ref, _ := model.ParseRef(s)
			r.DependsOn = append(r.DependsOn, ref)
		}
	}
}

func targetRoles(roles ...string) func(r *model.Resource) {
	return func(r *model.Resource) { r.Target = &model.Target{Roles: roles} }
}

func TestBuildPackageSteps(t *testing.T) {
	pkg := &model.Package{Resources: []*model.Resource{
		res("File", "motd", map[string]any{"path": "/etc/motd", "content": "hi"}, func(r *model.Resource) { r.Meta = model.Meta{Retry: 2} }),
		res("exec", "reload", map[string]any{"command": "true"}, dependsOn("file/motd"), func(r *model.Resource) {
			r.Associations = []model.Ref{{Kind: "File", Name: "motd"}}
		}),
		res("File", "agent", map[string]any{"path": "/etc/agent", "content": "x"}, func(r *model.Resource) {
			r.Target = &model.Target{Roles: []string{"compute"}, Nodes: []string{"node-1"}}
		}),
	}}
	steps, err := BuildPackage(pkg, kinds.Builtin(), expandCluster)
	require.NoError(t, err)
	want := []*model.Step{
		{ID: "file/motd", Kind: "file", Name: "motd", RecordKind: "File", Spec: map[string]any{"path": "/etc/motd", "content": "hi"}, Meta: model.Meta{Retry: 2}},
		{ID: "exec/reload", Kind: "exec", Name: "reload", RecordKind: "exec", Spec: map[string]any{"command": "true"}, Deps: []string{"file/motd"}, Associations: []model.Ref{{Kind: "File", Name: "motd"}}},
		{ID: "file/agent@n1", Kind: "file", Name: "agent", RecordKind: "File", Node: "n1", Spec: map[string]any{"path": "/etc/agent", "content": "x"}},
		{ID: "file/agent@n3", Kind: "file", Name: "agent", RecordKind: "File", Node: "n3", Spec: map[string]any{"path": "/etc/agent", "content": "x"}},
		{ID: "file/agent@n4", Kind: "file", Name: "agent", RecordKind: "File", Node: "n4", Spec: map[string]any{"path": "/etc/agent", "content": "x"}},
	}
	require.Equal(t, want, steps, "steps differ")
	steps[0].Spec["content"] = "changed"
	require.Equal(t, "hi", pkg.Resources[0].Spec["content"], "step spec shares the resource's map")
}

func TestBuildPackageDeps(t *testing.T) {
	dir := func(name, path string, f ...func(*model.Resource)) *model.Resource {
		return res("Directory", name, map[string]any{"path": path}, f...)
	}
	file := func(name, path string, f ...func(*model.Resource)) *model.Resource {
		return res("File", name, map[string]any{"path": path, "content": "x"}, f...)
	}
	tests := []struct {
		name string
		res  []*model.Resource
		want map[string][]string
	}{
		{
			name: "dependsOn and associations, kinds compared case-insensitively",
			res: []*model.Resource{
				res("exec", "a", map[string]any{"command": "true"}),
				res("exec", "b", map[string]any{"command": "true"}, dependsOn("Exec/a"), func(r *model.Resource) {
					r.Associations = []model.Ref{{Kind: "EXEC", Name: "c"}}
				}),
				res("exec", "c", map[string]any{"command": "true"}),
			},
			want: map[string][]string{"exec/b": {"exec/a", "exec/c"}},
		},
		{
			name: "file under a managed directory depends on it, and on every managed ancestor",
			res:  []*model.Resource{file("conf", "/srv/app/conf/app.ini"), dir("app", "/srv/app"), dir("conf", "/srv/app/conf/"), dir("other", "/srv/application")},
			want: map[string][]string{"file/conf": {"directory/app", "directory/conf"}, "directory/conf": {"directory/app"}},
		},
		{
			name: "relative paths match relative directories",
			res:  []*model.Resource{dir("d", "data"), file("f", "data/x.txt"), file("g", "/data/y.txt")},
			want: map[string][]string{"file/f": {"directory/d"}},
		},
		{
			name: "no auto-edge when a path is an expression",
			res: []*model.Resource{
				dir("d", "/srv"),
				file("f", `/srv/{{ env "NAME" }}`),
				dir("e", `{{ env "ROOT" }}`),
				file("g", "/srv/x"),
				res("File", "h", map[string]any{"path": map[string]any{"envRef": map[string]any{"key": "P"}}}),
			},
			want: map[string][]string{"file/g": {"directory/d"}},
		},
		{
			name: "exec in a managed working directory",
			res:  []*model.Resource{dir("d", "/srv/app"), res("exec", "build", map[string]any{"command": "make", "cwd": "/srv/app/"}), res("exec", "sub", map[string]any{"command": "make", "cwd": "/srv/app/sub"})},
			want: map[string][]string{"exec/build": {"directory/d"}, "exec/sub": {"directory/d"}},
		},
		{
			name: "an explicit reverse dependency wins over the auto-edge",
			res:  []*model.Resource{dir("d", "/srv", dependsOn("File/f")), file("f", "/srv/x")},
			want: map[string][]string{"directory/d": {"file/f"}},
		},
		{
			name: "auto-edges stay on one node",
			res: []*model.Resource{
				dir("d", "/srv", targetRoles("controller")),
				file("f", "/srv/x", targetRoles("*")),
				file("cp", "/srv/y"),
			},
			want: map[string][]string{"file/f@n1": {"directory/d@n1"}, "file/f@n2": {"directory/d@n2"}},
		},
		{
			name: "a user after its primary and supplementary groups, named by spec or by resource name",
			res: []*model.Resource{
				res("user", "alice", map[string]any{"gid": "devs", "groups": []any{"ops", "users", `{{ env "G" }}`}}),
				res("user", "bob", map[string]any{"gid": 2001}),
				res("unix_group", "devs", map[string]any{}),
				res("unix_group", "operators", map[string]any{"name": "ops"}),
				res("unix_group", "wheel", map[string]any{}),
			},
			want: map[string][]string{"user/alice": {"unix_group/devs", "unix_group/operators"}},
		},
		{
			name: "dependency on a targeted resource: the same node's copy, else every copy",
			res: []*model.Resource{
				res("exec", "prep", map[string]any{"command": "true"}, targetRoles("controller")),
				res("exec", "use", map[string]any{"command": "true"}, targetRoles("primary-controller", "compute"), dependsOn("exec/prep")),
				res("exec", "report", map[string]any{"command": "true"}, dependsOn("exec/prep")),
			},
			want: map[string][]string{
				"exec/use@n1": {"exec/prep@n1"},
				"exec/use@n3": {"exec/prep@n1", "exec/prep@n2"},
				"exec/use@n4": {"exec/prep@n1", "exec/prep@n2"},
				"exec/report": {"exec/prep@n1", "exec/prep@n2"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := BuildPackage(&model.Package{Resources: tt.res}, kinds.Builtin(), expandCluster)
			require.NoError(t, err)
			got := depsOf(steps)
			require.Equal(t, tt.want, got, "deps\n got %v\nwant %v", got, tt.want)
		})
	}
}

func TestBuildPackageErrors(t *testing.T) {
	pos := model.Position{Source: "pkg.yaml", Doc: 2, Line: 14, Column: 1}
	tests := []struct {
		name string
		res  []*model.Resource
		want []string
	}{
		{
			"unknown kind and missing references, all reported",
			[]*model.Resource{
				res("Fiel", "x", nil, func(r *model.Resource) { r.Pos = pos }),
				res("exec", "a", map[string]any{"command": "true"}, dependsOn("exec/zz"), func(r *model.Resource) { r.Associations = []model.Ref{{Kind: "Label", Name: "l"}} }),
			},
			[]string{`pkg.yaml:14:1: Fiel/x: unknown kind "Fiel"`, `exec/a: dependsOn: no resource exec/zz in the package`, `associations: no resource Label/l`},
		},
		{"duplicate", []*model.Resource{res("file", "a", nil), res("File", "a", nil)}, []string{"duplicate resource file/a"}},
		{"unknown target node", []*model.Resource{res("file", "a", nil, func(r *model.Resource) { r.Target = &model.Target{Nodes: []string{"n7"}} })}, []string{`target: unknown node "n7"`}},
		{"bad target regex", []*model.Resource{res("file", "a", nil, targetRoles("/(/"))}, []string{`target: invalid regular expression`}},
		{
			"cycle",
			[]*model.Resource{res("exec", "a", nil, dependsOn("exec/b")), res("exec", "b", nil, dependsOn("exec/c")), res("exec", "c", nil, dependsOn("exec/a"))},
			[]string{"dependency cycle: exec/a -> exec/b -> exec/c -> exec/a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildPackage(&model.Package{Resources: tt.res}, kinds.Builtin(), expandCluster)
			require.Error(t, err, "no error")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w, "error %q lacks %q", err, w)
			}
		})
	}
}

func TestBuildPackageCycleThroughAutoEdge(t *testing.T) {
	// The directory depends on an exec that writes into it: with the file's
	// auto-edge this is a cycle, reported with its members.
	pkg := &model.Package{Resources: []*model.Resource{
		res("Directory", "d", map[string]any{"path": "/srv"}, dependsOn("exec/gen")),
		res("exec", "gen", map[string]any{"command": "true"}, dependsOn("File/f")),
		res("File", "f", map[string]any{"path": "/srv/x", "content": "x"}),
	}}
	_, err := BuildPackage(pkg, nil, nil)
	var ce *dag.CycleError
	require.ErrorAs(t, err, &ce, "err = %v", err)
	require.True(t, slices.Equal(ce.Cycles[0], []string{"directory/d", "exec/gen", "file/f"}), "err = %v", err)
}
