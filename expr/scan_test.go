package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A condition is scanned as it is evaluated: bare or as a template.
func TestScanCondition(t *testing.T) {
	for _, src := range []string{`eq (env "SITE") (secret "K")`, `{{ eq (env "SITE") (secret "K") }}`} {
		env, secrets, _ := ScanCondition(src)
		require.Equal(t, []string{"SITE"}, env, src)
		require.Equal(t, []string{"K"}, secrets, src)
	}
	env, secrets, deps := ScanCondition("  ")
	require.Empty(t, env)
	require.Empty(t, secrets)
	require.Empty(t, deps)
}
