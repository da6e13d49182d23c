package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// TestGroupResourceIsTheAccountGroup: a package's `kind: group` (as
// Puppet and mgmt users write it) is the account group, unix_group, and
// so is a reference to one; a graph's `type: group` task stays Fuel's
// group, which orders member tasks.
func TestGroupResourceIsTheAccountGroup(t *testing.T) {
	src := `
kind: Group
metadata: {name: deploy}
spec: {gid: 3000, system: true}
---
kind: user
metadata: {name: app}
spec: {gid: deploy}
dependsOn: [group/deploy, {kind: GROUP, name: deploy}]
`
	docs, err := Parse(Options{}, Source{Name: "p.yaml", Data: []byte(src)})
	require.NoError(t, err)
	require.Len(t, docs.Package.Resources, 2)
	g := docs.Package.Resources[0]
	assert.Equal(t, kinds.KindUnixGroup, g.Kind)
	assert.Equal(t, "deploy", g.Name)
	assert.Equal(t, []model.Ref{{Kind: kinds.KindUnixGroup, Name: "deploy"}, {Kind: kinds.KindUnixGroup, Name: "deploy"}}, docs.Package.Resources[1].DependsOn)

	// Fuel's group attributes are not an account group's.
	_, err = Parse(Options{}, Source{Name: "p.yaml", Data: []byte("kind: group\nmetadata: {name: primary-controller}\nspec: {fault_tolerance: 1}\n")})
	sameLines(t, parseErrLines(t, err), []string{`p.yaml:3:8: spec.fault_tolerance: unknown field "fault_tolerance"`})

	graph := `apiVersion: cairn/v1
kind: Graph
metadata: {name: deploy, type: deploy}
tasks:
  - {id: controller, type: group, roles: [controller], parameters: {strategy: {type: parallel}}}
`
	gr, err := ParseGraph(Options{}, Source{Name: "g.yaml", Data: []byte(graph)})
	require.NoError(t, err)
	require.Len(t, gr.Tasks, 1)
	assert.Equal(t, model.TaskGroup, gr.Tasks[0].Type)
}
