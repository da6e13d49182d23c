package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// errorStrings renders parse errors one per entry.
func errorStrings(err error) []string {
	if err == nil {
		return nil
	}
	es, ok := err.(Errors)
	if !ok {
		return []string{err.Error()}
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Error()
	}
	return out
}

func TestCrossDependsShapes(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []model.CrossDep
		errs []string
	}{
		{"a list", `
- {id: a, type: stage}
- id: b
  type: stage
  cross-depends: [{name: a, role: master}]
`, []model.CrossDep{{Name: "a", Role: "master"}}, nil},
		{"one object, as Fuel accepted", `
- {id: a, type: stage}
- id: b
  type: stage
  cross-depends: {name: a, role: master, policy: any}
`, []model.CrossDep{{Name: "a", Role: "master", Policy: "any"}}, nil},
		{"one object without a name", `
- {id: a, type: stage}
- id: b
  type: stage
  cross_depends: {role: master}
`, nil, []string{"t.yaml:5:18: [1].cross_depends.name: missing name"}},
		{"a string", `
- {id: a, type: stage}
- id: b
  type: stage
  cross-depended-by: a
`, nil, []string{`t.yaml:5:22: [1].cross-depended-by: expected a list of {name, role, policy}, got a string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGraph(Options{}, Source{Name: "t.yaml", Data: []byte(tt.doc)})
			if tt.errs != nil {
				assert.Equal(t, tt.errs, errorStrings(err))
				return
			}
			require.NoError(t, err)
			require.Len(t, g.Tasks, 2)
			assert.Equal(t, tt.want, append(g.Tasks[1].CrossDepends, g.Tasks[1].CrossDependedBy...))
		})
	}
}

func TestDuplicateKeysWarnLastWins(t *testing.T) {
	doc := `
- id: a
  type: shell
  parameters:
    cmd: echo first
    timeout: 10
    cmd: echo last
  type: shell
`
	var warned []string
	g, err := ParseGraph(Options{Warn: func(e Error) { warned = append(warned, e.Error()) }}, Source{Name: "t.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	assert.Equal(t, []string{
		`t.yaml:7:5: duplicate key "cmd" (first at line 5): the last value is used, as Fuel's loader did`,
		`t.yaml:8:3: duplicate key "type" (first at line 3): the last value is used, as Fuel's loader did`,
	}, warned)
	require.Len(t, g.Tasks, 1)
	assert.Equal(t, "echo last", g.Tasks[0].Parameters["cmd"])
	assert.EqualValues(t, 10, g.Tasks[0].Parameters["timeout"])

	docs, err := Parse(Options{}, Source{Name: "p.yaml", Data: []byte(`
kind: directory
metadata: {name: a}
spec: {path: /a}
kind: file
`)})
	require.NoError(t, err)
	require.Len(t, docs.Warnings, 1)
	assert.Equal(t, `p.yaml:5:1: duplicate key "kind" (first at line 2): the last value is used, as Fuel's loader did`, docs.Warnings[0].Error())
	require.Len(t, docs.Package.Resources, 1)
	assert.Equal(t, "file", docs.Package.Resources[0].Kind)
}

func TestFuelTaskTypesParse(t *testing.T) {
	doc := `
- id: rsync_core_puppet
  type: sync
  role: ['/.*/']
  parameters: {src: "rsync://10.20.0.2:/puppet/modules/", dst: /etc/puppet/modules, timeout: 180}
- id: copy_keys
  type: copy_files
  role: ['/.*/']
  parameters:
    files: [{src: /var/lib/fuel/keys/nova.pub, dst: /var/lib/astute/nova/nova.pub}]
    permissions: '0600'
    dir_permissions: '0700'
- id: node_reboot
  type: reboot
  role: ['/.*/']
  parameters: {timeout: 900}
- id: netboot
  type: master_shell
  role: ['/.*/']
  parameters: {cmd: "sh netboot disable", timeout: 180}
- id: node_erase
  type: erase_node
  role: ['/.*/']
  parameters: {timeout: 180}
- id: typo
  type: copy_file
`
	_, err := ParseGraph(Options{}, Source{Name: "t.yaml", Data: []byte(doc)})
	assert.Equal(t, []string{
		"t.yaml:24:3: [4].parameters: no command is configured for the provisioning hook erase_node: set CAIRN_HOOK_ERASE_NODE on the server",
		`t.yaml:26:9: [5].type: unknown task type "copy_file"; did you mean "copy_files"?`,
	}, errorStrings(err))

	cat, err := kinds.Builtin().WithHooks(kinds.TaskEraseNode)
	require.NoError(t, err)
	_, err = ParseGraph(Options{Catalogue: cat}, Source{Name: "t.yaml", Data: []byte(doc)})
	assert.Equal(t, []string{`t.yaml:26:9: [5].type: unknown task type "copy_file"; did you mean "copy_files"?`}, errorStrings(err))
}

func TestExpandControlPlaneTasks(t *testing.T) {
	cat, err := kinds.Builtin().WithHooks(kinds.TaskEraseNode)
	require.NoError(t, err)
	g, err := ParseGraph(Options{Catalogue: cat}, Source{Name: "t.yaml", Data: []byte(`
- id: netboot
  type: master_shell
  role: [compute]
  parameters: {cmd: "sh netboot disable", timeout: 180, env: {A: b}}
- id: erase
  type: erase_node
  role: [compute]
  requires: [netboot]
  parameters: {timeout: 180, slave_name: x}
- id: reboot
  type: reboot
  role: [compute]
  requires: [erase]
`)})
	require.NoError(t, err)
	nodes := []model.Node{{ID: "n1", Roles: []string{"compute"}}, {ID: "n2", Roles: []string{"compute"}}}
	steps, err := Expand(g, nodes, ExpandOptions{Catalogue: cat})
	require.NoError(t, err)
	byID := map[string]*model.Step{}
	for _, s := range steps {
		byID[s.ID] = s
	}
	for _, n := range []string{"n1", "n2"} {
		ms := byID["netboot@"+n]
		require.NotNil(t, ms)
		assert.Equal(t, "", ms.Node, "master_shell runs on the control plane")
		assert.Equal(t, "exec", ms.Kind)
		assert.Equal(t, map[string]any{"A": "b", kinds.NodeEnv: n}, ms.Spec["env"])
		hk := byID["erase@"+n]
		require.NotNil(t, hk)
		assert.Equal(t, "", hk.Node)
		assert.Equal(t, map[string]any{"hook": "erase_node", "node": n, "timeout": int64(180), "parameters": map[string]any{"slave_name": "x"}}, normalize(hk.Spec))
		assert.Contains(t, hk.Deps, "netboot@"+n, "requires stays per node")
		rb := byID["reboot@"+n]
		require.NotNil(t, rb)
		assert.Equal(t, n, rb.Node, "reboot runs on the node")
		assert.Contains(t, rb.Deps, "erase@"+n)
	}
}

// normalize turns the numbers YAML decoding gives into int64.
func normalize(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case int:
			out[k] = int64(x)
		case float64:
			out[k] = int64(x)
		default:
			out[k] = v
		}
	}
	return out
}
