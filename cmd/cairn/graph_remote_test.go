package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// The release's upgrade graph: every node prepares, the controller
// migrates after it.
const releaseUpgrade = `apiVersion: cairn/v1
kind: Graph
metadata: {name: Upgrade, type: upgrade}
tasks:
  - id: prepare
    type: shell
    roles: ['*']
    parameters: {cmd: echo prepared > prepared.txt}
  - id: migrate
    type: shell
    roles: [controller]
    requires: [prepare]
    parameters: {cmd: echo migrated > migrated.txt}
`

// Two files of a cluster layer, sent with --dir as one graph: a task of
// its own and an override of the release's migrate.
var clusterLayerFiles = map[string]string{
	"cluster/a.yaml": `- id: announce
  type: shell
  roles: [compute]
  requires: [prepare]
  parameters: {cmd: echo announced > announced.txt}
`,
	"cluster/b.yaml": `- id: migrate
  parameters: {cmd: echo cluster-migrated > migrated.txt}
`,
}

// A plugin layer in Jsonnet importing a library next to it.
const pluginJsonnet = `local lib = import 'lib/tasks.libsonnet';
{
  apiVersion: 'cairn/v1',
  kind: 'Graph',
  metadata: { name: 'Plugin upgrade', type: 'upgrade' },
  tasks: [lib.task('plugin-check', 'echo %s > plugin.txt' % std.extVar('word'))],
}
`

const pluginLib = `{
  task(id, cmd):: { id: id, type: 'shell', roles: ['*'], requires: ['prepare'], parameters: { cmd: cmd } },
}
`

func TestGraphUploadDownloadListDelete(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{token: "tok"})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}}, model.Node{ID: "n2", Name: "n2", Roles: []string{"compute"}})
	releaseFile := s.file("release/upgrade.yaml", releaseUpgrade)
	for name, content := range clusterLayerFiles {
		s.file(name, content)
	}
	pluginFile := s.file("plugin/graph.jsonnet", pluginJsonnet)
	s.file("plugin/lib/tasks.libsonnet", pluginLib)

	t.Run("upload", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			out  []string
		}{
			{"release file", []string{"--release", "rel", "--type", "upgrade", "--file", releaseFile}, []string{"release", "rel", "upgrade", "Upgrade", "2"}},
			{"cluster dir", []string{"--cluster", cluster, "--type", "upgrade", "--dir", s.path("cluster")}, []string{"cluster", cluster, "upgrade", "2"}},
			{"plugin jsonnet with a relative import", []string{"--plugin", "plug", "--type", "upgrade", "--file", pluginFile, "--ext-var", "word=checked"}, []string{"plugin", "plug", "Plugin upgrade", "1"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s.run(append([]string{"graph", "upload"}, tt.args...)...).expect(t, 0).has(t, append([]string{"LAYER", "TASKS"}, tt.out...)...)
			})
		}
	})

	t.Run("upload errors", func(t *testing.T) {
		bad := s.file("bad/graph.yaml", "- id: a\n  type: shell\n  roles: ['*']\n  parameters: {cmd: x}\n  requires: [nowhere]\n- id: b\n  type: shel\n  roles: ['*']\n")
		badJsonnet := s.file("bad/graph.jsonnet", "local x = import 'missing.libsonnet';\n{tasks: x}\n")
		escape := s.file("bad/escape.jsonnet", "local x = import '../release/upgrade.libsonnet';\n{tasks: x}\n")
		s.file("release/upgrade.libsonnet", "[]")
		tests := []struct {
			name   string
			args   []string
			stderr []string
		}{
			{"positions name the file", []string{"--release", "rel", "--type", "broken", "--file", bad}, []string{bad + ":7:9: [1].type", "422"}},
			{"jsonnet import missing", []string{"--release", "rel", "--file", badJsonnet}, []string{badJsonnet + ":1:", "missing.libsonnet"}},
			{"jsonnet import leaves the directory", []string{"--release", "rel", "--file", escape}, []string{escape + ":1:", "leaves the import directory"}},
			{"no owner", []string{"--file", bad}, []string{"give one of --release, --cluster or --plugin"}},
			{"two owners", []string{"--release", "rel", "--plugin", "plug", "--file", bad}, []string{"give one of --release, --cluster or --plugin"}},
			{"file and dir", []string{"--release", "rel", "--file", bad, "--dir", s.dir}, []string{"give --file or --dir"}},
			{"unknown owner", []string{"--release", "nope", "--file", releaseFile}, []string{"404", `release "nope" not found`}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s.run(append([]string{"graph", "upload"}, tt.args...)...).expect(t, 1).hasErr(t, tt.stderr...)
			})
		}
		// Nothing of the broken graph was stored.
		_, _, err := s.client.GetGraph(s.ctx(), model.LayerRelease, "rel", "broken", "")
		require.True(t, client.IsStatus(err, 404), "broken graph stored: %v", err)
	})

	t.Run("list", func(t *testing.T) {
		s.run("graph", "list", "--release", "rel").expect(t, 0).has(t, "release", "upgrade", "Upgrade")
		all := s.run("graph", "list", "--cluster", cluster, "--all").expect(t, 0).stdout
		lines := strings.Split(strings.TrimSpace(all), "\n")
		require.Len(t, lines, 4, "--all should list release, cluster and plugin layers in merge order:\n%s", all)
		require.True(t, strings.HasPrefix(lines[1], "release"), "--all should list release, cluster and plugin layers in merge order:\n%s", all)
		require.True(t, strings.HasPrefix(lines[2], "cluster"), "--all should list release, cluster and plugin layers in merge order:\n%s", all)
		require.True(t, strings.HasPrefix(lines[3], "plugin"), "--all should list release, cluster and plugin layers in merge order:\n%s", all)
		var v struct{ Graphs []model.GraphInfo }
		out := s.run("graph", "list", "--cluster", cluster, "-o", "json").expect(t, 0).stdout
		err := json.Unmarshal([]byte(out), &v)
		require.NoError(t, err, "list -o json: %v\n%s", err, out)
		require.Len(t, v.Graphs, 1, "list -o json: %v\n%s", err, out)
		require.Equal(t, 2, v.Graphs[0].Tasks, "list -o json: %v\n%s", err, out)
		require.Equal(t, model.LayerCluster, v.Graphs[0].Layer, "list -o json: %v\n%s", err, out)
		s.run("graph", "list", "--release", "rel", "--all").expect(t, 1).hasErr(t, "--all needs --cluster")
	})

	t.Run("download", func(t *testing.T) {
		// YAML as uploaded comes back verbatim.
		got := s.run("graph", "download", "--release", "rel", "--type", "upgrade").expect(t, 0).stdout
		require.Equal(t, releaseUpgrade, got, "download should return the source as uploaded")
		// The merged graph: release, cluster and plugin tasks, the cluster's override winning.
		merged := s.run("graph", "download", "--cluster", cluster, "--type", "upgrade", "--merged", "-o", "json").expect(t, 0).stdout
		var g struct {
			Tasks []struct {
				ID         string         `json:"id"`
				Parameters map[string]any `json:"parameters"`
			} `json:"tasks"`
		}
		err := json.Unmarshal([]byte(merged), &g)
		require.NoError(t, err, "merged -o json: %v\n%s", err, merged)
		ids := map[string]map[string]any{}
		for _, task := range g.Tasks {
			ids[task.ID] = task.Parameters
		}
		require.Len(t, ids, 4, "merged tasks")
		require.NotNil(t, ids["plugin-check"], "merged tasks = %v", ids)
		require.NotNil(t, ids["announce"], "merged tasks = %v", ids)
		cmd := ids["migrate"]["cmd"]
		require.Equal(t, "echo cluster-migrated > migrated.txt", cmd, "cluster override lost: migrate cmd")
		cmd = ids["plugin-check"]["cmd"]
		require.Equal(t, "echo checked > plugin.txt", cmd, "jsonnet ext var not applied")
		// Table lists the tasks; --file writes the graph.
		s.run("graph", "download", "--cluster", cluster, "--type", "upgrade", "--merged", "-o", "table").expect(t, 0).
			has(t, "TASK", "TYPE", "ROLES", "REQUIRES", "plugin-check", "prepare", "controller")
		out := s.path("out/merged.yaml")
		s.file("out/.keep", "")
		s.run("graph", "download", "--cluster", cluster, "--type", "upgrade", "--merged", "--file", out).expect(t, 0)
		var doc map[string]any
		err = yaml.Unmarshal([]byte(readFile(t, out)), &doc)
		require.NoError(t, err, "--file: %v\n%s", err, readFile(t, out))
		require.Equal(t, "Graph", doc["kind"], "--file: %v\n%s", err, readFile(t, out))
		s.run("graph", "download", "--release", "rel", "--merged").expect(t, 1).hasErr(t, "--merged needs --cluster")
		s.run("graph", "download", "--release", "rel", "--type", "nope").expect(t, 1).hasErr(t, "404")
	})

	t.Run("delete", func(t *testing.T) {
		s.run("graph", "delete", "--plugin", "plug", "--type", "upgrade").expect(t, 0).has(t, `deleted graph "upgrade" of plugin plug`)
		s.run("graph", "list", "--plugin", "plug", "-o", "yaml").expect(t, 0).has(t, "graphs: []")
		s.run("graph", "delete", "--plugin", "plug", "--type", "upgrade").expect(t, 1).hasErr(t, "404")
	})
}

// TestPayloadPositions checks that the server's error positions in a
// package sent as one YAML stream name the user's files and lines.
func TestPayloadPositions(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{})
	id := s.stack("web")
	good := s.file("pkg/a.yaml", "apiVersion: cairn/v1\nkind: File\nmetadata: {name: a}\nspec: {path: /tmp/a, content: a}\n")
	bad := s.file("pkg/b.yaml", "apiVersion: cairn/v1\nkind: File\nmetadata: {name: b}\nspec:\n  path: /tmp/b\n  contnet: b\n")
	jsonFile := s.file("pkg/c.json", `{"apiVersion": "cairn/v1", "kind": "Fiel", "metadata": {"name": "c"}, "spec": {}}`)
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"one file", []string{bad}, []string{bad + ":6:3: spec.contnet", "did you mean"}},
		{"several files", []string{good, bad}, []string{bad + ":6:3: spec.contnet"}},
		{"json re-indented keeps the file name", []string{good, jsonFile}, []string{jsonFile + ": kind:"}},
		{"a directory", []string{filepath.Dir(bad)}, []string{bad + ":6:3:", jsonFile + ": kind:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.run(append([]string{"plan", "--stack", id}, tt.args...)...).expect(t, 1).hasErr(t, tt.stderr...)
			require.NotContains(t, r.stderr, "request:", "positions still name the request")
		})
	}
}

func TestGraphExecute(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	cluster := s.cluster(
		model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}},
		model.Node{ID: "n2", Name: "n2", Roles: []string{"compute"}},
		model.Node{ID: "n3", Name: "n3", Roles: []string{"compute"}},
	)
	s.run("graph", "upload", "--release", "rel", "--type", "upgrade", "--file", s.file("release.yaml", releaseUpgrade)).expect(t, 0)
	for name, content := range clusterLayerFiles {
		s.file(name, content)
	}
	s.run("graph", "upload", "--cluster", cluster, "--type", "upgrade", "--dir", s.path("cluster")).expect(t, 0)
	nodeFile := func(node, name string) string { return filepath.Join(s.locals.NodeRoot(cluster, node), name) }
	exists := func(node, name string) bool {
		_, err := os.Stat(nodeFile(node, name))
		return err == nil
	}

	t.Run("subset of nodes and tasks", func(t *testing.T) {
		r := s.run("graph", "execute", "--cluster", cluster, "--type", "upgrade", "--nodes", "n1,n2", "--tasks", "prepare,announce").expect(t, 0)
		r.has(t, "ran prepare@n1", "ran prepare@n2", "ran announce@n2", "skipped migrate@n1", "Graph execution completed")
		for _, c := range []struct {
			node, file string
			want       bool
		}{
			{"n1", "prepared.txt", true}, {"n2", "prepared.txt", true}, {"n2", "announced.txt", true},
			{"n3", "prepared.txt", false}, {"n1", "migrated.txt", false},
		} {
			got := exists(c.node, c.file)
			require.Equal(t, c.want, got, "%s on %s exists = %v, want %v\n%s", c.file, c.node, got, c.want, r.stdout)
		}
	})

	t.Run("dry run changes nothing", func(t *testing.T) {
		r := s.run("graph", "execute", "--cluster", cluster, "--type", "upgrade", "--dry-run", "-o", "json").expect(t, 0)
		var ex model.Execution
		err := json.Unmarshal([]byte(r.stdout), &ex)
		require.NoError(t, err, "-o json: %v\n%s", err, r.stdout)
		require.Equal(t, model.ExecGraph, ex.Kind, "-o json: %v\n%s", err, r.stdout)
		require.Equal(t, model.ExecCompleted, ex.Status, "-o json: %v\n%s", err, r.stdout)
		require.False(t, exists("n1", "migrated.txt"), "a dry run changed the nodes")
		require.False(t, exists("n3", "prepared.txt"), "a dry run changed the nodes")
	})

	t.Run("whole cluster, returning at once", func(t *testing.T) {
		r := s.run("graph", "execute", "--cluster", cluster, "--type", "upgrade", "--wait=false").expect(t, 0)
		id := strings.TrimSpace(r.stdout)
		done := s.waitExecution(id, "finished", (*model.Execution).Finished)
		require.Equal(t, model.ExecCompleted, done.Status, "status %s: %s", done.Status, done.Error)
		got := strings.TrimSpace(readFile(t, nodeFile("n1", "migrated.txt")))
		require.Equal(t, "cluster-migrated", got, "migrated.txt = %q: the cluster layer's override should run", got)
		require.True(t, exists("n3", "prepared.txt"), "n3 was not prepared")
		s.run("exec", "list", "--cluster", cluster, "--kind", "graph").expect(t, 0).has(t, id)
	})

	t.Run("refused", func(t *testing.T) {
		tests := []struct {
			name   string
			args   []string
			stderr []string
		}{
			{"unknown node", []string{"--cluster", cluster, "--type", "upgrade", "--nodes", "n9"}, []string{"422", `nodes[0]: cluster "` + cluster + `" has no node "n9"`}},
			{"unknown task", []string{"--cluster", cluster, "--type", "upgrade", "--tasks", "nope"}, []string{"422", `no task "nope"`}},
			{"unknown type", []string{"--cluster", cluster, "--type", "nope"}, []string{"422", `no graph of type "nope"`}},
			{"no cluster", []string{"--type", "upgrade"}, []string{"give --cluster"}},
			{"bad on-failure", []string{"--cluster", cluster, "--on-failure", "panic"}, []string{`--on-failure "panic"`}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s.run(append([]string{"graph", "execute"}, tt.args...)...).expect(t, 1).hasErr(t, tt.stderr...)
			})
		}
	})
}
