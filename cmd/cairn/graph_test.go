package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

const releaseTasks = `- id: deploy_start
  type: stage
- id: deploy_end
  type: stage
  requires: [deploy_start]
- id: hosts
  type: shell
  roles: ['*']
  requires: [deploy_start]
  required_for: [deploy_end]
  parameters: {cmd: echo hosts, timeout: 60}
- id: api
  type: shell
  roles: [controller]
  requires: [hosts]
  required_for: [deploy_end]
  strategy: {type: one_by_one}
  parameters: {cmd: echo api}
- id: agent
  type: shell
  roles: [compute]
  requires: [hosts]
  required_for: [deploy_end]
  cross_depends: [{name: api, role: controller, policy: any}]
  parameters: {cmd: echo agent}
---
apiVersion: cairn/v1
kind: Graph
metadata: {type: upgrade}
tasks:
  - {id: upgrade-db, type: shell, roles: [controller], parameters: {cmd: upgrade}}
`

const clusterTasks = `- id: api
  strategy: {type: parallel, amount: 2}
  parameters: {cmd: echo api --verbose}
- id: agent
  cross_depends: null
`

const pluginTasks = `[{"id": "lma", "type": "shell", "roles": ["*"], "requires": ["hosts"], "required_for": ["deploy_end"], "parameters": {"cmd": "echo lma"}}]`

const clusterNodes = `nodes:
  - {id: n1, name: node-1, roles: [controller]}
  - {id: n2, name: node-2, roles: [compute]}
`

func graphFixture(t *testing.T) func(string) string {
	dir := writeFiles(t, map[string]string{
		"release.yaml":    releaseTasks,
		"cluster.yaml":    clusterTasks,
		"lma.json":        pluginTasks,
		"other.yaml":      "- {id: lma, type: shell, roles: ['*'], parameters: {cmd: other}}\n",
		"broken.yaml":     "- id: deploy_start\n  requires: [api]\n",
		"nodes.yaml":      clusterNodes,
		"list-nodes.yaml": "- {id: n1, roles: [controller]}\n- {id: n2, roles: [compute]}\n",
		"bad-nodes.yaml":  "- {id: n1, roles: [controller], colour: red}\n- {id: n1, roles: [compute]}\n- {roles: [x]}\n",
		"cycle.yaml":      "- {id: a, type: shell, roles: ['*'], requires: [b], parameters: {cmd: a}}\n- {id: b, type: shell, roles: ['*'], requires: [a], parameters: {cmd: b}}\n",
	})
	return func(name string) string { return filepath.Join(dir, name) }
}

func TestGraphMerge(t *testing.T) {
	p := graphFixture(t)
	code, stdout, stderr := runCLI(t, "graph", "merge", "--release", p("release.yaml"), "--cluster", p("cluster.yaml"), "--plugin", p("lma.json"), "--type", "default")
	require.Equal(t, 0, code, "exit %d: %s", code, stderr)
	g, err := graphs.ParseGraph(graphs.Options{}, graphs.Source{Name: "out.yaml", Data: []byte(stdout)})
	require.NoError(t, err, "output does not parse: %v\n%s", err, stdout)
	var ids []string
	byID := map[string]*model.Task{}
	for _, tk := range g.Tasks {
		ids = append(ids, tk.ID)
		byID[tk.ID] = tk
	}
	require.Equal(t, []string{"deploy_start", "deploy_end", "hosts", "api", "agent", "lma"}, ids, "tasks")
	api := byID["api"]
	require.Equal(t, 2, api.Strategy.Limit(), "api not merged: %+v", *api)
	require.Equal(t, "echo api --verbose", api.Parameters["cmd"], "api not merged: %+v", *api)
	require.Equal(t, []string{"hosts"}, api.Requires, "api not merged: %+v", *api)
	agent := byID["agent"]
	require.Nil(t, agent.CrossDepends, "agent cross_depends not removed")
	require.Equal(t, "default", g.Type, "type")

	t.Run("json and another type", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "graph", "merge", "--release", p("release.yaml"), "--cluster", p("cluster.yaml"), "--type", "upgrade", "-o", "json")
		require.Equal(t, 0, code, "exit %d: %s", code, stderr)
		var doc struct {
			Metadata struct{ Type string }
			Tasks    []map[string]any
		}
		err := json.Unmarshal([]byte(stdout), &doc)
		require.NoError(t, err, "%v\n%s", err, stdout)
		require.Equal(t, "upgrade", doc.Metadata.Type, "unexpected: %s", stdout)
		require.Len(t, doc.Tasks, 1, "unexpected: %s", stdout)
		require.Equal(t, "upgrade-db", doc.Tasks[0]["id"], "unexpected: %s", stdout)
	})

	errorCases := []struct {
		name string
		args []string
		want []string
	}{
		{"two plugins define a task", []string{"--release", p("release.yaml"), "--plugin", p("lma.json"), "--plugin", p("other.yaml"), "--type", "default"},
			[]string{`task "lma" is defined by both plugin "` + p("lma.json") + `" and plugin "` + p("other.yaml") + `"`}},
		{"merged graph invalid, position in the layer", []string{"--release", p("release.yaml"), "--cluster", p("broken.yaml"), "--type", "default"},
			[]string{"not valid", p("broken.yaml") + ":", "dependency cycle"}},
		{"no layer", []string{}, []string{"give at least one layer"}},
		{"bad output format", []string{"--release", p("release.yaml"), "-o", "xml"}, []string{`-o "xml"`}},
		{"layer file with errors", []string{"--release", p("nodes.yaml")}, []string{p("nodes.yaml") + ":"}},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"graph", "merge"}, tt.args...)...)
			require.Equal(t, 1, code, "exit %d, stdout %q", code, stdout)
			require.Empty(t, stdout, "exit %d, stdout %q", code, stdout)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w, "stderr lacks %q:\n%s", w, stderr)
			}
		})
	}
}

func TestGraphShow(t *testing.T) {
	p := graphFixture(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "all nodes",
			args: []string{p("release.yaml"), "--nodes", p("nodes.yaml")},
			want: `graph default: 6 steps in 5 layers on 2 nodes
layer 1:
  deploy_start@master [stage]
layer 2:
  hosts@n1 [exec] <- deploy_start@master
  hosts@n2 [exec] <- deploy_start@master
layer 3:
  api@n1 [exec, max 1 at once] <- hosts@n1
layer 4:
  agent@n2 [exec] <- hosts@n2, any(api@n1)
layer 5:
  deploy_end@master [stage] <- deploy_start@master, hosts@n1, hosts@n2, api@n1, agent@n2
`,
		},
		{
			name: "node and task subsets, list-shaped nodes file",
			args: []string{p("release.yaml"), "--nodes", p("list-nodes.yaml"), "--only-nodes", "n2", "--tasks", "agent"},
			want: `graph default: 4 steps in 4 layers on 2 nodes
layer 1:
  deploy_start@master [skipped]
layer 2:
  hosts@n2 [skipped] <- deploy_start@master
layer 3:
  agent@n2 [exec] <- hosts@n2
layer 4:
  deploy_end@master [skipped] <- deploy_start@master, hosts@n2, agent@n2
`,
		},
		{
			name: "graph type",
			args: []string{p("release.yaml"), "--nodes", p("nodes.yaml"), "--type", "upgrade"},
			want: "graph upgrade: 1 step in 1 layer on 2 nodes\nlayer 1:\n  upgrade-db@n1 [exec]\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"graph", "show"}, tt.args...)...)
			require.Equal(t, 0, code, "exit %d: %s", code, stderr)
			require.Equal(t, tt.want, stdout, "got:\n%s\nwant:\n%s", stdout, tt.want)
		})
	}

	t.Run("json", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "graph", "show", p("release.yaml"), "--nodes", p("nodes.yaml"), "-o", "json")
		require.Equal(t, 0, code, "exit %d: %s", code, stderr)
		var out struct {
			Type   string
			Layers [][]model.Step
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &out))
		require.Equal(t, "default", out.Type, "unexpected: %s", stdout)
		require.Len(t, out.Layers, 5, "unexpected: %s", stdout)
		require.Equal(t, "api@n1", out.Layers[2][0].ID, "unexpected: %s", stdout)
		require.Equal(t, "echo api", out.Layers[2][0].Spec["command"], "unexpected: %s", stdout)
	})

	errorCases := []struct {
		name string
		args []string
		want []string
	}{
		{"nodes file problems, all reported", []string{p("release.yaml"), "--nodes", p("bad-nodes.yaml")},
			[]string{p("bad-nodes.yaml") + `:1:33: node 0: unknown field "colour"`, `node "n1" is listed twice`, "node 2 has neither id nor name"}},
		{"nodes flag required", []string{p("release.yaml")}, []string{`required flag(s) "nodes" not set`}},
		{"cycle", []string{p("cycle.yaml"), "--nodes", p("nodes.yaml")}, []string{"dependency cycle"}},
		{"unknown node in subset", []string{p("release.yaml"), "--nodes", p("nodes.yaml"), "--only-nodes", "n9"}, []string{`unknown node "n9"`}},
		{"unknown type", []string{p("release.yaml"), "--nodes", p("nodes.yaml"), "--type", "nope"}, []string{`no graph of type "nope" (found default, upgrade)`}},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"graph", "show"}, tt.args...)...)
			require.Equal(t, 1, code, "exit %d: %s", code, stderr)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w, "stderr lacks %q:\n%s", w, stderr)
			}
		})
	}
}
