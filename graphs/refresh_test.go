package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// A notify or subscribe naming no resource is an error at its own line;
// one that closes a loop with dependsOn is a cycle named by its members.
func TestParseNotifyAndSubscribeTargets(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"valid both ways", `
kind: File
metadata: {name: conf}
spec: {path: /etc/app.conf, content: x}
notify: [Exec/restart]
---
kind: Exec
metadata: {name: restart}
spec: {command: "true", refreshOnly: true}
subscribe: [File/conf]
`, nil},
		{"missing targets", `
kind: File
metadata: {name: conf}
spec: {path: /etc/app.conf, content: x}
notify:
  - Exec/restart
  - Exec/reload
---
kind: Exec
metadata: {name: restart}
spec: {command: "true"}
subscribe: [File/conf, {kind: File, name: other}]
`, []string{
			`t.yaml:7:5: notify[1]: notifies exec/reload: no such resource in the package`,
			`t.yaml:12:24: subscribe[1]: subscribes to file/other: no such resource in the package`,
		}},
		{"subscribedTo spelling", `
kind: Exec
metadata: {name: restart}
spec: {command: "true"}
subscribedTo: [File/ghost]
`, []string{
			`t.yaml:5:16: subscribedTo[0]: subscribes to file/ghost: no such resource in the package`,
		}},
		{"notify against dependsOn is a cycle", `
kind: File
metadata: {name: conf}
spec: {path: /etc/app.conf, content: x}
notify: [Exec/restart]
dependsOn: [Exec/restart]
---
kind: Exec
metadata: {name: restart}
spec: {command: "true"}
`, []string{
			`t.yaml:2:1: dependsOn: dependency cycle: file/conf -> exec/restart -> file/conf`,
		}},
		{"refreshOnly must be a boolean", `
kind: Exec
metadata: {name: restart}
spec: {command: "true", refreshOnly: "yes"}
`, []string{
			`t.yaml:4:38: spec.refreshOnly: expected boolean, got string`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Options{}, Source{Name: "t.yaml", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.want)
		})
	}
}

// ValidatePackage checks notify and subscribe as Parse does, at the
// resource's position.
func TestValidatePackageNotifyAndSubscribe(t *testing.T) {
	at := func(line int) model.Position { return model.Position{Source: "pkg", Line: line, Column: 1} }
	pkg := &model.Package{Resources: []*model.Resource{
		{Kind: "file", Name: "a", Spec: map[string]any{"path": "/a", "content": "x"}, Notify: []model.Ref{{Kind: "exec", Name: "nope"}}, Pos: at(1)},
		{Kind: "exec", Name: "r", Spec: map[string]any{"command": "true"}, Subscribe: []model.Ref{{Kind: "file", Name: "b"}}, Pos: at(4)},
	}}
	sameLines(t, errLinesOf(ValidatePackage(nil, pkg)), []string{
		`pkg:1:1: notify[0]: notifies exec/nope: no such resource in the package`,
		`pkg:4:1: subscribe[0]: subscribes to file/b: no such resource in the package; did you mean "file/a"?`,
	})
}

func notify(refs ...string) func(r *model.Resource) {
	return func(r *model.Resource) {
		for _, s := range refs {
			ref, _ := model.ParseRef(s)
			r.Notify = append(r.Notify, ref)
		}
	}
}

func subscribe(refs ...string) func(r *model.Resource) {
	return func(r *model.Resource) {
		for _, s := range refs {
			ref, _ := model.ParseRef(s)
			r.Subscribe = append(r.Subscribe, ref)
		}
	}
}

// notify is the reverse edge plus a subscription, subscribe the edge
// plus a subscription; each subscription is listed once however many
// ways it is declared, and copies on nodes subscribe to the copy on
// their node.
func TestBuildPackageRefreshEdges(t *testing.T) {
	exec := func(name string, f ...func(*model.Resource)) *model.Resource {
		return res("Exec", name, map[string]any{"command": "true"}, f...)
	}
	file := func(name string, f ...func(*model.Resource)) *model.Resource {
		return res("File", name, map[string]any{"path": "/etc/" + name, "content": "x"}, f...)
	}
	tests := []struct {
		name     string
		res      []*model.Resource
		nodes    []model.Node
		wantDeps map[string][]string
		wantSubs map[string][]string
	}{
		{
			name:     "notify",
			res:      []*model.Resource{file("conf", notify("Exec/restart")), exec("restart")},
			wantDeps: map[string][]string{"exec/restart": {"file/conf"}},
			wantSubs: map[string][]string{"exec/restart": {"file/conf"}},
		},
		{
			name:     "subscribe",
			res:      []*model.Resource{exec("restart", subscribe("File/conf", "File/unit")), file("conf"), file("unit")},
			wantDeps: map[string][]string{"exec/restart": {"file/conf", "file/unit"}},
			wantSubs: map[string][]string{"exec/restart": {"file/conf", "file/unit"}},
		},
		{
			name: "declared three ways, listed once",
			res: []*model.Resource{
				file("conf", notify("Exec/restart")),
				exec("restart", subscribe("File/conf"), dependsOn("File/conf")),
			},
			wantDeps: map[string][]string{"exec/restart": {"file/conf"}},
			wantSubs: map[string][]string{"exec/restart": {"file/conf"}},
		},
		{
			name: "copies on nodes subscribe to their node's copy",
			res: []*model.Resource{
				file("conf", targetRoles("web"), notify("Exec/restart")),
				exec("restart", targetRoles("web")),
			},
			nodes: []model.Node{{ID: "n1", Roles: []string{"web"}}, {ID: "n2", Roles: []string{"web"}}},
			wantDeps: map[string][]string{
				"exec/restart@n1": {"file/conf@n1"}, "exec/restart@n2": {"file/conf@n2"},
			},
			wantSubs: map[string][]string{
				"exec/restart@n1": {"file/conf@n1"}, "exec/restart@n2": {"file/conf@n2"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := BuildPackage(&model.Package{Resources: tt.res}, nil, tt.nodes)
			require.NoError(t, err)
			deps, subs := map[string][]string{}, map[string][]string{}
			for _, s := range steps {
				if len(s.Deps) > 0 {
					deps[s.ID] = s.Deps
				}
				if len(s.Subscribes) > 0 {
					subs[s.ID] = s.Subscribes
				}
			}
			assert.Equal(t, tt.wantDeps, deps)
			assert.Equal(t, tt.wantSubs, subs)
		})
	}
}

// Auto-edges keep ordering the resource after the matched one by default,
// run it before with direction before, and subscribe the later one to the
// earlier with notify (Puppet's autosubscribe and autonotify).
func TestBuildPackageAutoEdgeDirectionAndNotify(t *testing.T) {
	cat := kinds.Builtin()
	require.NoError(t, cat.AddAll([]kinds.Kind{
		{Name: "Restart", Base: "exec", Defaults: map[string]any{"command": "true"}, AutoEdges: []kinds.AutoEdge{
			{Kind: "directory", From: "cwd", Attr: "path", Match: kinds.MatchEqual, Notify: true},
		}},
		{Name: "Seed", Base: "directory", AutoEdges: []kinds.AutoEdge{
			{Kind: "exec", From: "path", Attr: "cwd", Match: kinds.MatchEqual, Direction: kinds.DirectionBefore, Notify: true},
		}},
		{Name: "Marker", Base: "file", AutoEdges: []kinds.AutoEdge{
			{Kind: "exec", From: "path", Attr: "creates", Match: kinds.MatchEqual, Direction: kinds.DirectionBefore},
		}},
	}))
	pkg := &model.Package{Resources: []*model.Resource{
		res("Restart", "app", map[string]any{"command": "true", "cwd": "/srv/app"}),
		res("Directory", "app", map[string]any{"path": "/srv/app"}),
		res("Seed", "data", map[string]any{"path": "/srv/data"}),
		res("Exec", "load", map[string]any{"command": "true", "cwd": "/srv/data", "creates": "/srv/data/done"}),
		res("Marker", "done", map[string]any{"path": "/srv/data/done", "content": "x"}),
	}}
	steps, err := BuildPackage(pkg, cat, nil)
	require.NoError(t, err)
	byID := map[string]*model.Step{}
	for _, s := range steps {
		byID[s.ID] = s
	}
	// autosubscribe: the restart runs after the directory, refreshed by it.
	assert.Contains(t, byID["restart/app"].Deps, "directory/app")
	assert.Equal(t, []string{"directory/app"}, byID["restart/app"].Subscribes)
	// autonotify: the seed runs before the exec, which it refreshes.
	assert.Contains(t, byID["exec/load"].Deps, "seed/data")
	assert.Equal(t, []string{"seed/data"}, byID["exec/load"].Subscribes)
	assert.Empty(t, byID["seed/data"].Deps)
	// autobefore without notify: ordering only.
	assert.Contains(t, byID["exec/load"].Deps, "marker/done")
	assert.NotContains(t, byID["exec/load"].Subscribes, "marker/done")
	assert.Empty(t, byID["marker/done"].Deps)
}

// A kind definition may declare an auto-edge's direction; anything but
// before or after is refused.
func TestKindDefinitionAutoEdgeDirection(t *testing.T) {
	_, err := kinds.ParseKindDefinition(map[string]any{
		"kind": "Kind", "metadata": map[string]any{"name": "Svc"},
		"spec": map[string]any{"base": "exec", "autoEdges": []any{
			map[string]any{"kind": "file", "from": "cwd", "attr": "path", "match": "equal", "direction": "sideways"},
		}},
	})
	require.ErrorContains(t, err, `spec.autoEdges[0].direction: expected "after" or "before", got "sideways"`)
	k, err := kinds.ParseKindDefinition(map[string]any{
		"kind": "Kind", "metadata": map[string]any{"name": "Svc"},
		"spec": map[string]any{"base": "exec", "autoEdges": []any{
			map[string]any{"kind": "file", "from": "cwd", "attr": "path", "match": "equal", "direction": "before", "notify": true},
		}},
	})
	require.NoError(t, err)
	require.Len(t, k.AutoEdges, 1)
	assert.True(t, k.AutoEdges[0].Before())
	assert.True(t, k.AutoEdges[0].Notify)
}
