package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScanAndRequired(t *testing.T) {
	spec := map[string]any{
		"content":  `site={{ env "SITE" }} db={{ secret "DB_PASSWORD" }} region={{ env "REGION" | default "eu" }}`,
		"owner":    map[string]any{EnvRefKey: map[string]any{"key": "OWNER", "default": "root"}},
		"group":    map[string]any{EnvRefKey: map[string]any{"key": "GROUP"}},
		"password": map[string]any{SecretRefKey: map[string]any{"key": "TOKEN"}},
		"nested":   []any{map[string]any{"x": `{{ default "a" (env "ZONE") }}{{ env "SITE" }}`}},
	}
	env, secrets, _ := Scan(spec)
	assert.Equal(t, []string{"GROUP", "OWNER", "REGION", "SITE", "ZONE"}, env, "Scan lists every ref")
	assert.Equal(t, []string{"DB_PASSWORD", "TOKEN"}, secrets)

	env, secrets = Required(spec)
	assert.Equal(t, []string{"GROUP", "SITE"}, env, "refs with a default need no value")
	assert.Equal(t, []string{"DB_PASSWORD", "TOKEN"}, secrets)
}
