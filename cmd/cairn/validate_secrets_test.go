package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// `cairn validate` warns, offline, of a user's password written in the
// package, and still passes it (the apply is what refuses it).
func TestValidateWarnsOfALiteralPassword(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"literal.yaml": "kind: user\nmetadata: {name: deploy}\nspec:\n  password: \"$6$salt$hash\"\n",
		"secret.yaml":  "kind: user\nmetadata: {name: deploy}\nspec:\n  password: {secretRef: {key: DEPLOY_HASH}}\n",
	})
	literal := filepath.Join(dir, "literal.yaml")
	code, stdout, stderr := runCLI(t, "validate", literal)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "valid")
	assert.Contains(t, stderr, "warning: "+literal+":4:13: spec.password: password is written in the package: give it as a secret")

	code, _, stderr = runCLI(t, "validate", filepath.Join(dir, "secret.yaml"))
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "warning")
}
