package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The refs and variables a package needs: env refs and secrets without a
// default, variables read by name outside a kind's verbatim templates.
func TestRequiredRefsAndMissingVars(t *testing.T) {
	docs, err := Parse(Options{}, Source{Name: "p.yaml", Data: []byte(`apiVersion: cairn/v1
kind: File
metadata: {name: a}
spec:
  path: /srv/a
  content: '{{ env "SITE" }} {{ env "REGION" | default "eu" }} {{ secret "DB" }} {{ .vars.region }} {{ index .vars "name" }}'
---
apiVersion: cairn/v1
kind: File
metadata: {name: b}
spec: {path: /srv/b, template: '{{ .vars.inner }}', vars: {inner: x}}
`)})
	require.NoError(t, err)
	env, secrets := docs.RequiredRefs()
	assert.Equal(t, []string{"SITE"}, env)
	assert.Equal(t, []string{"DB"}, secrets)
	assert.Equal(t, []string{"name", "region"}, docs.MissingVars(nil))
	assert.Equal(t, []string{"name"}, docs.MissingVars(map[string]any{"region": "eu"}))
	assert.Nil(t, docs.MissingVars(map[string]any{"region": "eu", "name": "www"}))

	var none *Documents
	env, secrets = none.RequiredRefs()
	assert.Nil(t, env)
	assert.Nil(t, secrets)
	assert.Nil(t, none.MissingVars(nil))
}
