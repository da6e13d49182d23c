package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `graph show` evaluates yaql cross dependencies against the nodes file's
// data (uid, name, roles), each on its node.
func TestGraphShowCrossDependsYAQL(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	graph := write("tasks.yaml", `- id: primary-cluster
  type: shell
  roles: [primary-controller]
  parameters: {cmd: "true"}
- id: cluster
  type: shell
  roles: [controller, compute]
  parameters: {cmd: "true"}
  cross-depends:
    yaql_exp: "[{name=>'primary-cluster', role=>$.roles.select('primary-' + $)}]"
`)
	nodes := write("nodes.yaml", `- {id: n1, roles: [primary-controller]}
- {id: n2, roles: [controller]}
- {id: n3, roles: [compute]}
`)
	code, stdout, stderr := runCLI(t, "graph", "show", graph, "--nodes", nodes)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `graph default: 3 steps in 2 layers on 3 nodes
layer 1:
  primary-cluster@n1 [exec]
  cluster@n3 [exec]
layer 2:
  cluster@n2 [exec] <- primary-cluster@n1
`, stdout)
}
