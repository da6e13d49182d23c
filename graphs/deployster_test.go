package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestDeploysterExpr(t *testing.T) {
	aliases := map[string]bool{"disk": true}
	tests := []struct{ in, want string }{
		{"{{ disk.state.zone }}", "{{ deps.disk.state.zone }}"},
		{"zone-{{disk.state.zone}}-{{ region }}", "zone-{{deps.disk.state.zone}}-{{ vars.region }}"},
		{"{{ deps.disk.state.zone }} {{ vars.x }} {{ .vars.y }}", "{{ deps.disk.state.zone }} {{ vars.x }} {{ .vars.y }}"},
		{`{{ "disk" }} {{ 'region' }}`, `{{ "disk" }} {{ 'region' }}`},
		{"{{ lower(region) }}", "{{ lower(vars.region) }}"},
		{"{{ a and not b }}", "{{ vars.a and not vars.b }}"},
		{"no expression", "no expression"},
		{"{{ unclosed", "{{ unclosed"},
		{"{{ x1.y_2 }}", "{{ vars.x1.y_2 }}"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DeploysterExpr(tt.in, aliases), tt.in)
	}
}

func TestDeploysterManifest(t *testing.T) {
	const doc = `plugs:
  creds: {path: ~/creds}
resources:
  disk1:
    type: acme/disk
    config: {name: d, zone: '{{ region }}'}
  vm:
    type: acme/vm
    readonly: true
    dependencies: {disk: disk1}
    config:
      zone: '{{ disk.state.zone }}'
`
	docs, err := Parse(Options{}, Source{Name: "m.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	assert.True(t, docs.Deployster)
	require.Len(t, docs.Package.Resources, 2)
	disk, vm := docs.Package.Resources[0], docs.Package.Resources[1]
	assert.Equal(t, "external", disk.Kind)
	assert.Equal(t, "disk1", disk.Name)
	assert.Equal(t, model.Position{Source: "m.yaml", Line: 4, Column: 3}, disk.Pos)
	assert.Equal(t, "acme/disk", disk.Spec["image"])
	assert.Equal(t, map[string]any{"name": "d", "zone": "{{ vars.region }}"}, disk.Spec["config"])
	assert.Equal(t, map[string]any{"zone": "{{ deps.disk.state.zone }}"}, vm.Spec["config"])
	assert.Equal(t, map[string]any{"disk": "disk1"}, vm.Spec["dependencies"])
	assert.True(t, vm.Meta.Noop, "readonly: resolved, never applied")
	require.Len(t, docs.Warnings, 1)
	assert.Contains(t, docs.Warnings[0].Error(), "m.yaml:1:1: plugs: a manifest's plugs are not read")

	_, err = Parse(Options{}, Source{Name: "bad.yaml", Data: []byte(`resources:
  a: {config: {}}
  b: {type: x/y, confg: {}}
  c: [1]
`)})
	assert.Equal(t, []string{
		`bad.yaml:2:3: resources.a.type: missing type (the resource's Docker image)`,
		`bad.yaml:3:18: resources.b.confg: unknown field "confg"; did you mean "config"?`,
		`bad.yaml:4:6: resources.c: expected a resource {type, config, dependencies}, got a list`,
	}, errorStrings(err))

	assert.True(t, HasDeploysterManifest([]byte("kind: file\n---\n"+doc)))
	assert.False(t, HasDeploysterManifest([]byte("kind: file\nmetadata: {name: a}\n")))
	assert.False(t, HasDeploysterManifest([]byte("resources: {}\nkind: x\n")), "a document with a kind is Cairn's")
}
