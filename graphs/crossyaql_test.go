package graphs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/yaql"
)

// Cross dependencies written as yaql are kept, checked where conditions
// are, and written back as they were.
func TestParseCrossDependsYAQL(t *testing.T) {
	tests := []struct {
		name            string
		src             string
		errs            []string
		depends, deprby string
	}{
		{"cross-depends", `
- id: a
  type: stage
  cross-depends:
    yaql_exp: "[{name => 'a', role => $.roles}]"
`, nil, "[{name => 'a', role => $.roles}]", ""},
		{"cross_depended_by", `
- id: a
  type: stage
  cross_depended_by: {yaql_exp: "[]"}
`, nil, "", "[]"},
		{"invalid expression, with its place", `
- id: a
  type: stage
  cross-depends:
    yaql_exp: "[{name => 'a'}"
`, []string{`g.yaml:5:15: [0].cross-depends.yaql_exp: invalid yaql expression: line 1, column 15: expected "]", got end of expression`}, "", ""},
		{"unknown function", `
- id: a
  type: stage
  cross_depended_by: {yaql_exp: "swtch(true => [])"}
`, []string{`g.yaml:4:33: [0].cross_depended_by.yaql_exp: invalid yaql expression: line 1, column 1: unknown function swtch; did you mean "switch"?`}, "", ""},
		{"other keys beside yaql_exp", `
- id: a
  type: stage
  cross-depends: {yaql_exp: "[]", name: b}
`, []string{`g.yaml:4:35: [0].cross-depends.name: unknown field "name"`}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGraph(Options{}, Source{Name: "g.yaml", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.errs)
			if tt.errs != nil {
				return
			}
			task := g.Tasks[0]
			assert.Equal(t, tt.depends, task.CrossDependsYAQL)
			assert.Equal(t, tt.deprby, task.CrossDependedByYAQL)
			out, err := MarshalGraph(g, "yaml")
			require.NoError(t, err)
			again, err := ParseGraph(Options{}, Source{Name: "again.yaml", Data: out})
			require.NoError(t, err, "%s", out)
			assert.Equal(t, task.CrossDependsYAQL, again.Tasks[0].CrossDependsYAQL)
			assert.Equal(t, task.CrossDependedByYAQL, again.Tasks[0].CrossDependedByYAQL)
		})
	}
}

func TestCrossDepsOf(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []model.CrossDep
		err  string
	}{
		{"null is none", nil, nil, ""},
		{"empty list", []any{}, []model.CrossDep{}, ""},
		{"one object", map[string]any{"name": "a"}, []model.CrossDep{{Name: "a"}}, ""},
		{"list with roles and policy", []any{map[string]any{"name": "a", "role": []any{"controller"}, "policy": "any"}, map[string]any{"name": "/b/", "role": "self"}},
			[]model.CrossDep{{Name: "a", Role: []string{"controller"}, Policy: "any"}, {Name: "/b/", Role: "self"}}, ""},
		{"a string", "a", nil, "expected a list of {name, role, policy}, got a string"},
		{"an item not an object", []any{int64(1)}, nil, "[0]: expected {name, role, policy}, got a number"},
		{"no name", []any{map[string]any{"role": "x"}}, nil, "[0]: missing name"},
		{"name not a string", []any{map[string]any{"name": true}}, nil, "[0].name: expected a task name, got a boolean"},
		{"role not strings", []any{map[string]any{"name": "a", "role": []any{int64(1)}}}, nil, "[0].role[0]: expected a string, got a number"},
		{"bad policy", []any{map[string]any{"name": "a", "policy": "some"}}, nil, `[0].policy: expected "all" or "any", got some`},
		{"unknown field", []any{map[string]any{"name": "a", "nme": "b"}}, nil, `[0]: unknown field "nme" (want name, role, policy)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CrossDepsOf(tt.v)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// A yaql cross dependency is evaluated on each node of its task and links
// that node's copy as a literal one would; without an evaluator there is
// no edge; a value of the wrong shape fails naming task and node.
func TestExpandCrossDependsYAQL(t *testing.T) {
	nodes := []model.Node{
		{ID: "n1", Roles: []string{"primary-controller"}},
		{ID: "n2", Roles: []string{"controller"}},
		{ID: "n3", Roles: []string{"compute"}},
	}
	pos := model.Position{Source: "tasks.yaml", Line: 7, Column: 3}
	graph := func(field string) *model.Graph {
		b := &model.Task{ID: "b", Type: "shell", Roles: []string{"controller", "compute"}, Parameters: map[string]any{"cmd": "true"}, Pos: pos}
		src := "[{name => 'a', role => $.roles.select('primary-' + $)}]"
		if field == "cross_depends" {
			b.CrossDependsYAQL = src
		} else {
			b.CrossDependedByYAQL = src
		}
		return &model.Graph{Type: "default", Tasks: []*model.Task{
			{ID: "a", Type: "shell", Roles: []string{"primary-controller", "primary-compute"}, Parameters: map[string]any{"cmd": "true"}},
			b,
		}}
	}
	eval := func(t *model.Task, field, src, node string) (any, error) {
		x, err := yaql.Parse(src)
		if err != nil {
			return nil, err
		}
		var roles []any
		for _, n := range nodes {
			if n.ID == node {
				for _, r := range n.Roles {
					roles = append(roles, r)
				}
			}
		}
		return x.Eval(yaql.Input{New: map[string]any{"roles": roles}})
	}
	tests := []struct {
		name  string
		field string
		fn    CrossDepsFunc
		deps  map[string][]string
		err   string
	}{
		{"cross_depends per node", "cross_depends", eval, map[string][]string{"a@n1": nil, "b@n2": {"a@n1"}, "b@n3": nil}, ""},
		{"cross_depended_by per node", "cross_depended_by", eval, map[string][]string{"a@n1": {"b@n2"}, "b@n2": nil, "b@n3": nil}, ""},
		{"no evaluator, no edge", "cross_depends", nil, map[string][]string{"a@n1": nil, "b@n2": nil, "b@n3": nil}, ""},
		{"a value of the wrong shape", "cross_depends", func(*model.Task, string, string, string) (any, error) { return "a", nil }, nil,
			`tasks.yaml:7:3: task "b": cross_depends on node n2: expected a list of {name, role, policy}, got a string`},
		{"an evaluation error", "cross_depends", func(*model.Task, string, string, string) (any, error) { return nil, errors.New("no key roles") }, nil,
			`tasks.yaml:7:3: task "b": cross_depends on node n2: no key roles`},
		{"a missing task", "cross_depends", func(*model.Task, string, string, string) (any, error) {
			return []any{map[string]any{"name": "ghost"}}, nil
		}, nil, `tasks.yaml:7:3: task "b": cross_depends[0] on node n2: no task "ghost"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Expand(graph(tt.field), nodes, ExpandOptions{CrossDeps: tt.fn})
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			got := map[string][]string{}
			for _, s := range steps {
				got[s.ID] = s.Deps
			}
			assert.Equal(t, tt.deps, got)
		})
	}
}
