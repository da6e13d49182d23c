package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs a command line in-process.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeFiles writes name → content into a new temporary directory and
// returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

const motdPackage = `apiVersion: cairn/v1
kind: Directory
metadata: {name: app}
spec: {path: /srv/app}
---
apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec:
  path: /srv/app/motd
  content: hello
dependsOn: [Directory/app]
`

const upgradeGraph = `apiVersion: cairn/v1
kind: Graph
metadata: {name: Upgrade database, type: upgrade}
tasks:
  - id: maintenance-on
    type: shell
    roles: ['*']
    parameters: {cmd: touch /run/maint}
  - id: stop-api
    type: shell
    roles: [controller]
    requires: [maintenance-on]
    parameters: {cmd: systemctl stop api}
  - id: migrate
    type: exec
    roles: [master]
    parameters: {command: migrate}
`

func TestValidate(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"pkg.yaml":   motdPackage,
		"graph.yaml": upgradeGraph,
		"bad.yaml": `apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec:
  path: /etc/motd
  contnet: hi
dependsOn: [Directory/nope]
`,
		"badgraph.json": `{"type": "default", "tasks": [
  {"id": "a", "type": "shell", "requires": ["b"], "parameters": {"cmd": "x"}},
  {"id": "a", "type": "shel"}
]}`,
		"main.jsonnet": `local lib = import 'lib/labels.libsonnet';
[{apiVersion: 'cairn/v1', kind: 'File', metadata: {name: lib.name}, spec: {path: '/tmp/' + std.extVar('site'), content: 'x'}}]
`,
		"lib/labels.libsonnet": `{name: 'from-lib'}`,
		"escape.jsonnet":       `import '../outside.libsonnet'`,
		"dir/one.yaml":         motdPackage,
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string   // exact, when set
		stderrHas  []string // substrings of stderr
		stderrNone bool
	}{
		{
			name: "valid package and graph", args: []string{"validate", p("pkg.yaml"), p("graph.yaml")},
			code: 0, stdout: "2 files: 2 resources, 1 graph (3 tasks): valid\n", stderrNone: true,
		},
		{
			name: "directory", args: []string{"validate", p("dir")},
			code: 0, stdout: "1 file: 2 resources: valid\n", stderrNone: true,
		},
		{
			name: "jsonnet with ext var and an import relative to the file", args: []string{"validate", "--ext-var", "site=lab", p("main.jsonnet")},
			code: 0, stdout: "1 file: 1 resource: valid\n", stderrNone: true,
		},
		{
			name: "every error with file, line, column and path",
			args: []string{"validate", p("bad.yaml"), p("badgraph.json")},
			code: 1,
			stderrHas: []string{
				p("bad.yaml") + ":6:3: spec.contnet: ",
				p("bad.yaml") + ":7:13: dependsOn[0]: ",
				"warning: " + p("badgraph.json") + ":2:45: tasks[0].requires[0]: requires \"b\": no such task in graph \"default\": the relation is dropped",
				p("badgraph.json") + ":3:10: tasks[1].id: ",
				p("badgraph.json") + ":3:23: tasks[1].type: ",
				"4 errors in 2 files",
			},
		},
		{
			name: "missing ext var is a document error", args: []string{"validate", p("main.jsonnet")},
			code: 1, stderrHas: []string{p("main.jsonnet"), "site"},
		},
		{
			name: "imports may not leave the file's directory", args: []string{"validate", p("escape.jsonnet")},
			code: 1, stderrHas: []string{p("escape.jsonnet"), "outside.libsonnet"},
		},
		{name: "bad ext var", args: []string{"validate", "--ext-var", "novalue", p("pkg.yaml")}, code: 1, stderrHas: []string{`--ext-var "novalue": want key=value`}},
		{name: "missing file", args: []string{"validate", p("nope.yaml")}, code: 1, stderrHas: []string{"nope.yaml", "no such file"}},
		{name: "no arguments", args: []string{"validate"}, code: 1, stderrHas: []string{"requires at least 1 arg"}},
		{name: "unknown flag", args: []string{"validate", "--frobnicate", p("pkg.yaml")}, code: 1, stderrHas: []string{"unknown flag: --frobnicate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			require.Equal(t, tt.code, code, "exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			if tt.stdout != "" {
				require.Equal(t, tt.stdout, stdout, "stdout %q, want %q", stdout, tt.stdout)
			}
			if tt.stderrNone {
				require.Empty(t, stderr, "stderr: %s", stderr)
			}
			for _, s := range tt.stderrHas {
				assert.Contains(t, stderr, s, "stderr lacks %q:\n%s", s, stderr)
			}
		})
	}
}

func TestValidatePartialLayer(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cluster.yaml": "- id: stop-api\n  condition: null\n  requires: [elsewhere]\n"})
	code, _, stderr := runCLI(t, "validate", filepath.Join(dir, "cluster.yaml"))
	require.Equal(t, 1, code, "without --partial: exit %d, %s", code, stderr)
	require.Contains(t, stderr, "missing task type", "without --partial: exit %d, %s", code, stderr)
	code, stdout, stderr := runCLI(t, "validate", "--partial", filepath.Join(dir, "cluster.yaml"))
	require.Equal(t, 0, code, "with --partial: exit %d, %q %s", code, stdout, stderr)
	require.Equal(t, "1 file: 0 resources, 1 graph (1 task): valid\n", stdout, "with --partial: exit %d, %q %s", code, stdout, stderr)
}

func TestRootHelp(t *testing.T) {
	code, stdout, _ := runCLI(t)
	require.Equal(t, 0, code, "exit %d: %s", code, stdout)
	require.Contains(t, stdout, "validate", "exit %d: %s", code, stdout)
	require.Contains(t, stdout, "graph", "exit %d: %s", code, stdout)
	code, _, stderr := runCLI(t, "frobnicate")
	require.Equal(t, 1, code, "exit %d: %s", code, stderr)
	require.Contains(t, stderr, `unknown command "frobnicate"`, "exit %d: %s", code, stderr)
}
