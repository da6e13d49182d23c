package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// meta.idempotent declares a resource's or a task's change safe to
// repeat; it survives a marshal, and a non-boolean is refused.
func TestParseMetaIdempotent(t *testing.T) {
	docs, err := Parse(Options{}, Source{Name: "p.yaml", Data: []byte(`
kind: exec
metadata: {name: a}
spec: {command: "true"}
meta: {idempotent: true}
---
kind: exec
metadata: {name: b}
spec: {command: "true"}
`)})
	require.NoError(t, err)
	require.Len(t, docs.Package.Resources, 2)
	assert.True(t, docs.Package.Resources[0].Meta.Idempotent)
	assert.False(t, docs.Package.Resources[1].Meta.Idempotent)

	g, err := ParseGraph(Options{}, Source{Name: "g.yaml", Data: []byte(`
- id: migrate
  type: shell
  roles: [db]
  parameters: {cmd: ./migrate}
  meta: {idempotent: true}
`)})
	require.NoError(t, err)
	require.Len(t, g.Tasks, 1)
	assert.True(t, g.Tasks[0].Meta.Idempotent)

	_, err = Parse(Options{}, Source{Name: "p.yaml", Data: []byte(`
kind: exec
metadata: {name: a}
spec: {command: "true"}
meta: {idempotent: perhaps}
`)})
	sameLines(t, parseErrLines(t, err), []string{`p.yaml:5:20: meta.idempotent: expected true or false, got a string`})
}
