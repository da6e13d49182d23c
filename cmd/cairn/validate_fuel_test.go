package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

const deletionGraph = `- id: deletion_start
  type: stage
- id: node_erase
  type: erase_node
  role: ['/.*/']
  requires: [deletion_start]
  parameters:
    timeout: 180
    timeout: 240
`

func TestValidateFuelHooksAndDuplicateKeys(t *testing.T) {
	dir := writeFiles(t, map[string]string{"deletion.yaml": deletionGraph})
	file := filepath.Join(dir, "deletion.yaml")
	t.Setenv("CAIRN_HOOK_ERASE_NODE", "")

	code, _, stderr := runCLI(t, "validate", file)
	assert.Equal(t, 0, code, "a hook is the server's setting: offline, one not configured is a warning")
	assert.Contains(t, stderr, "warning: "+file+":7:3: [1].parameters: no command is configured here for the provisioning hook erase_node: the server that executes this graph must set CAIRN_HOOK_ERASE_NODE")
	assert.NotContains(t, stderr, "unknown")

	t.Setenv("CAIRN_HOOK_ERASE_NODE", "/usr/local/bin/erase-node")
	code, stdout, stderr := runCLI(t, "validate", file)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "valid")
	assert.NotContains(t, stderr, "provisioning hook", "configured here: nothing to warn of")
	assert.Contains(t, stderr, `warning: `+file+`:9:5: duplicate key "timeout" (first at line 8): the last value is used, as Fuel's loader did`)
}

// TestValidateFuelLibraryProvisionAndDeletion validates fuel-library's own
// provisioning and deletion graphs offline, with no CAIRN_HOOK_* set: they
// are valid, each hook task a warning with its line.
func TestValidateFuelLibraryProvisionAndDeletion(t *testing.T) {
	for _, h := range []string{"CAIRN_HOOK_MOVE_TO_BOOTSTRAP", "CAIRN_HOOK_ERASE_NODE", "CAIRN_HOOK_COBBLER_SYNC"} {
		t.Setenv(h, "")
	}
	dir := "../../../shared/testdata/fuel-library"
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("fuel-library files: %v", err)
		}
		t.Skipf("fuel-library files: %v", err)
	}
	tests := []struct {
		graph string
		tasks string
		hooks []string // "line:col: path: hook"
	}{
		{"provision", "10 tasks", []string{"55:3: [5].parameters: move_to_bootstrap"}},
		{"deletion", "5 tasks", []string{"27:3: [3].parameters: move_to_bootstrap", "40:3: [4].parameters: erase_node"}},
	}
	for _, tt := range tests {
		t.Run(tt.graph, func(t *testing.T) {
			file := filepath.Join(dir, "graphs_"+tt.graph+"_tasks.yaml")
			code, stdout, stderr := runCLI(t, "validate", file)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, "1 file: 0 resources, 1 graph ("+tt.tasks+"): valid\n", stdout)
			for _, h := range tt.hooks {
				at, hook, _ := strings.Cut(h, ": [")
				path, hook, _ := strings.Cut(hook, ": ")
				assert.Contains(t, stderr, "warning: "+file+":"+at+": ["+path+": no command is configured here for the provisioning hook "+hook)
			}
			assert.Equal(t, len(tt.hooks), strings.Count(stderr, "provisioning hook"), stderr)
		})
	}
}

// TestValidateCrossDependsNamingNoTask: validate reports every cross
// dependency naming no task at once, with file, path and line.
func TestValidateCrossDependsNamingNoTask(t *testing.T) {
	dir := writeFiles(t, map[string]string{"g.yaml": `- id: a
  type: stage
- id: b
  type: stage
  cross-depends: [{name: aa}, {name: a}, {name: c}]
- id: c
  type: stage
  cross_depended_by: {name: z, role: self}
`})
	file := filepath.Join(dir, "g.yaml")
	code, _, stderr := runCLI(t, "validate", file)
	assert.Equal(t, 1, code)
	assert.Equal(t, file+`:5:26: [1].cross-depends[0].name: cross dependency "aa": no such task in graph "default"
`+file+`:8:29: [2].cross_depended_by.name: cross dependency "z": no such task in graph "default"
2 errors in 1 file
`, stderr)
}

// TestFuelLibraryHookOfflineWarningServerError: the deletion graph that
// validates offline with warnings is refused where it executes, by a
// server that has no command for its hooks, naming the settings.
func TestFuelLibraryHookOfflineWarningServerError(t *testing.T) {
	for _, h := range []string{"CAIRN_HOOK_MOVE_TO_BOOTSTRAP", "CAIRN_HOOK_ERASE_NODE", "CAIRN_HOOK_COBBLER_SYNC"} {
		t.Setenv(h, "")
	}
	file := "../../../shared/testdata/fuel-library/graphs_deletion_tasks.yaml"
	if _, err := os.Stat(file); err != nil {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("fuel-library files: %v", err)
		}
		t.Skipf("fuel-library files: %v", err)
	}
	runCairn(t, "validate", file).expect(t, 0)
	s := newAPIServer(t, apiServerOptions{temporal: true})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}})
	s.run("graph", "upload", "--cluster", cluster, "--type", "deletion", "--file", file).expect(t, 0)
	s.run("graph", "execute", "--cluster", cluster, "--type", "deletion").expect(t, 1).
		hasErr(t, "set CAIRN_HOOK_MOVE_TO_BOOTSTRAP on the server", "set CAIRN_HOOK_ERASE_NODE on the server")
}
