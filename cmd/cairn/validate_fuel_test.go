package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
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
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no command is configured for the provisioning hook erase_node: set CAIRN_HOOK_ERASE_NODE on the server")
	assert.NotContains(t, stderr, "unknown")

	t.Setenv("CAIRN_HOOK_ERASE_NODE", "/usr/local/bin/erase-node")
	code, stdout, stderr := runCLI(t, "validate", file)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "valid")
	assert.Contains(t, stderr, `warning: `+file+`:9:5: duplicate key "timeout" (first at line 8): the last value is used, as Fuel's loader did`)
}
