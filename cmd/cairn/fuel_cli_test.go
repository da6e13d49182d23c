package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// runInput runs cairn against the server with stdin holding input, the
// answer to a confirmation.
func (s *apiServer) runInput(input string, args ...string) cliResult {
	s.t.Helper()
	args = append(args, "--server", s.url)
	if s.token != "" {
		args = append(args, "--token", s.token)
	}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := executeIO(ctx, args, strings.NewReader(input), &out, &errOut)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

const bareTasks = "- {id: hello, type: shell, roles: ['*'], parameters: {cmd: echo hello}}\n"

func TestGraphUploadTypeDefaulting(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{token: "tok"})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}})
	bare := s.file("bare.yaml", bareTasks)
	declared := s.file("declared.yaml", "apiVersion: cairn/v1\nkind: Graph\nmetadata: {type: provision}\ntasks:\n"+
		"  - {id: hello, type: shell, roles: ['*'], parameters: {cmd: echo hello}}\n")
	fuelObject := s.file("fuel.json", `{"type": "verify", "name": "Verify", "tasks": [{"id": "ping", "type": "shell", "roles": ["*"], "parameters": {"cmd": "true"}}]}`)

	tests := []struct {
		name   string
		input  string
		args   []string
		code   int
		typ    string // stored type, when code is 0
		stderr string
	}{
		{"declared type is used", "", []string{"--cluster", cluster, "--file", declared}, 0, "provision", ""},
		{"fuel graph object's type", "", []string{"--cluster", cluster, "--file", fuelObject}, 0, "verify", ""},
		{"bare list refused without an answer", "", []string{"--cluster", cluster, "--file", bare}, 1, "", "not confirmed: give --type TYPE, or --yes"},
		{"bare list refused when the answer is no", "n\n", []string{"--cluster", cluster, "--file", bare}, 1, "", `as type "default"? [y/N]`},
		{"bare list confirmed", "y\n", []string{"--cluster", cluster, "--file", bare}, 0, "default", `as type "default"? [y/N]`},
		{"bare list with --yes", "", []string{"--release", "rel", "--file", bare, "--yes"}, 0, "default", ""},
		{"explicit type wins", "", []string{"--plugin", "plug", "--file", bare, "--type", "custom"}, 0, "custom", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.runInput(tt.input, append([]string{"graph", "upload"}, tt.args...)...)
			require.Equal(t, tt.code, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, tt.stderr)
			if tt.code == 0 {
				assert.Contains(t, r.stdout, tt.typ)
			}
		})
	}
	// The refused uploads stored nothing: the cluster's default graph came from the confirmed one only.
	list, err := s.client.ListAllGraphs(s.ctx(), model.GraphFilter{Layer: model.LayerCluster, OwnerID: cluster})
	require.NoError(t, err)
	var types []string
	for _, g := range list {
		types = append(types, g.Type)
	}
	assert.Equal(t, []string{"default", "provision", "verify"}, types)
}

func TestGraphMergeTypeDefaulting(t *testing.T) {
	p := graphFixture(t)
	dir := writeFiles(t, map[string]string{
		"up.yaml":   "kind: Graph\nmetadata: {type: upgrade}\ntasks:\n  - {id: u, type: shell, roles: ['*'], parameters: {cmd: u}}\n",
		"bare.yaml": bareTasks,
	})
	file := func(n string) string { return dir + "/" + n }
	run := func(input string, args ...string) cliResult {
		var out, errOut bytes.Buffer
		code := executeIO(context.Background(), append([]string{"graph", "merge"}, args...), strings.NewReader(input), &out, &errOut)
		return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
	}
	r := run("", "--release", file("up.yaml"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "type: upgrade")
	assert.Contains(t, r.stdout, "id: u")

	r = run("", "--release", file("bare.yaml"))
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout, "nothing is printed without a type")
	assert.Contains(t, r.stderr, "--yes")

	r = run("yes\n", "--release", file("bare.yaml"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "id: hello")

	r = run("", "--release", p("release.yaml"), "--cluster", file("up.yaml"), "--plugin", file("bare.yaml"), "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "type: upgrade", "the one declared type, over --yes")

	r = run("", "--release", file("up.yaml"), "--type", "nope")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, `no layer has a graph of type "nope" (the files hold upgrade)`)

	r = run("", "--release", file("up.yaml"), "--cluster", writeFiles(t, map[string]string{"d.yaml": "kind: Graph\nmetadata: {type: other}\ntasks: []\n"})+"/d.yaml")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "declare graph types upgrade, other: give --type")
}

func TestGraphDownloadListAndExecuteFuelStyle(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}})
	up := func(args ...string) {
		s.run(append([]string{"graph", "upload", "--yes"}, args...)...).expect(t, 0)
	}
	up("--release", "rel", "--file", s.file("r.yaml", "- {id: base, type: shell, roles: ['*'], parameters: {cmd: echo base}}\n"))
	up("--cluster", cluster, "--file", s.file("c.yaml", "- {id: mine, type: shell, roles: ['*'], requires: [base], parameters: {cmd: echo mine}}\n"))
	up("--plugin", "plug", "--file", s.file("p.yaml", "- {id: plug, type: shell, roles: ['*'], requires: [base], parameters: {cmd: echo plug}}\n"))
	up("--release", "rel", "--type", "upgrade", "--file", s.file("u.yaml", "- {id: u, type: shell, roles: ['*'], parameters: {cmd: echo u}}\n"))

	t.Run("partial downloads", func(t *testing.T) {
		tests := []struct {
			name    string
			args    []string
			has     []string
			hasNot  []string
			errCode int
		}{
			{"release and cluster", []string{"--layers", "release,cluster"}, []string{"id: base", "id: mine"}, []string{"id: plug"}, 0},
			{"the plugins", []string{"--layers", "plugins"}, []string{"id: plug"}, []string{"id: base", "id: mine"}, 0},
			{"everything", []string{"--merged"}, []string{"id: base", "id: mine", "id: plug"}, nil, 0},
			{"bad layer", []string{"--layers", "stack"}, nil, nil, 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.run(append([]string{"graph", "download", "--cluster", cluster}, tt.args...)...)
				require.Equal(t, tt.errCode, r.code, r.stderr)
				for _, w := range tt.has {
					assert.Contains(t, r.stdout, w)
				}
				for _, w := range tt.hasNot {
					assert.NotContains(t, r.stdout, w)
				}
			})
		}
		s.run("graph", "download", "--release", "rel", "--layers", "plugins").expect(t, 1).hasErr(t, "--layers needs --cluster")
		// Without --type: the default graph when there is one, else the only one there is.
		s.run("graph", "download", "--release", "rel").expect(t, 0).has(t, "id: base")
		s.run("graph", "upload", "--plugin", "plug", "--type", "other", "--file", s.path("u.yaml")).expect(t, 0)
		s.run("graph", "delete", "--plugin", "plug").expect(t, 0)
		s.run("graph", "download", "--plugin", "plug").expect(t, 0).has(t, "id: u").hasErr(t, `graph type "other" (the only one stored)`)
	})

	t.Run("list shows relations", func(t *testing.T) {
		out := s.run("graph", "list").expect(t, 0).has(t, "LAYER", "USED BY").stdout
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 5, out) // header, cluster default, plugin other, release default, release upgrade
		for _, l := range lines[1:] {
			assert.Contains(t, l, cluster, "every graph here is merged by the cluster: %s", l)
		}
		var doc struct {
			Graphs []model.GraphMeta `json:"graphs"`
		}
		require.NoError(t, json.Unmarshal([]byte(s.run("graph", "list", "--type", "upgrade", "-o", "json").expect(t, 0).stdout), &doc))
		require.Len(t, doc.Graphs, 1)
		assert.Equal(t, []string{cluster}, doc.Graphs[0].UsedBy)
		s.run("graph", "list", "--release", "rel").expect(t, 0).has(t, "USED BY", "TASKS", cluster)
	})

	t.Run("--node as well as --nodes", func(t *testing.T) {
		// The server has no Temporal: a request that passes the checks gets 503, one that names
		// a node the cluster lacks gets 422 naming it, so either way the nodes reached it.
		s.run("graph", "execute", "--cluster", cluster, "--node", "ghost", "--wait=false").expect(t, 1).hasErr(t, "ghost")
		s.run("graph", "execute", "--cluster", cluster, "--nodes", "n1", "--node", "ghost2", "--wait=false").expect(t, 1).hasErr(t, "ghost2")
		s.run("graph", "execute", "--cluster", cluster, "--node", "n1", "--event", "deploy_changes", "--wait=false").expect(t, 1).hasErr(t, "503")
		s.run("graph", "execute", "--cluster", cluster, "--event", "bad/event", "--wait=false").expect(t, 1).hasErr(t, "events[0]")
	})
}

func TestClusterSettingsAndReleaseCommands(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{token: "tok"})
	s.run("release", "create", "liberty", "--id", "liberty", "--version", "2015.1.0-8.0").expect(t, 0).has(t, "liberty", "2015.1.0-8.0")
	s.run("release", "show", "liberty", "-o", "json").expect(t, 0).has(t, `"version": "2015.1.0-8.0"`)
	s.run("release", "list").expect(t, 0).has(t, "VERSION", "2015.1.0-8.0")
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}})

	s.run("cluster", "settings", "show", cluster).expect(t, 0).has(t, "{}")
	s.run("cluster", "settings", "set", cluster, "public_ssl.hostname=cloud.example.com", "master_ip=10.20.0.2", "debug=true", "workers=4").
		expect(t, 0).has(t, "hostname: cloud.example.com", "master_ip: 10.20.0.2")
	out := s.run("cluster", "settings", "show", cluster, "-o", "json").expect(t, 0).stdout
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, map[string]any{"public_ssl": map[string]any{"hostname": "cloud.example.com"}, "master_ip": "10.20.0.2", "debug": true, "workers": float64(4)}, got)

	// null removes; a file merges; --replace replaces.
	s.run("cluster", "settings", "set", cluster, "debug=null", "--file", s.file("s.yaml", "public_ssl: {horizon: true}\n")).expect(t, 0)
	got = nil
	require.NoError(t, json.Unmarshal([]byte(s.run("cluster", "settings", "show", cluster, "-o", "json").expect(t, 0).stdout), &got))
	assert.Equal(t, map[string]any{"public_ssl": map[string]any{"hostname": "cloud.example.com", "horizon": true}, "master_ip": "10.20.0.2", "workers": float64(4)}, got)
	s.run("cluster", "settings", "set", cluster, "--file", s.file("all.json", `{"only": "this"}`), "--replace").expect(t, 0).has(t, "only: this")

	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"nothing to set", []string{cluster}, "give PATH=VALUE arguments or --file"},
		{"not an assignment", []string{cluster, "oops"}, "want PATH=VALUE"},
		{"empty key", []string{cluster, "a..b=1"}, "empty key"},
		{"replace needs a file", []string{cluster, "a=1", "--replace"}, "--replace takes --file"},
		{"unknown cluster", []string{"nope", "a=1"}, "404"},
		{"reserved key", []string{cluster, "$cairnSealed=1"}, "reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.run(append([]string{"cluster", "settings", "set"}, tt.args...)...).expect(t, 1).hasErr(t, tt.err)
		})
	}
}
