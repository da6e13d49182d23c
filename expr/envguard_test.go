package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverEnv stands for the server's own environment: its settings hold
// what documents must never read.
func serverEnv(key string) (string, bool) {
	v, ok := map[string]string{
		"CAIRN_API_TOKEN":      "token-value",
		"CAIRN_CODEC_KEY":      "codec-key-value",
		"CAIRN_DATABASE_URL":   "postgres://user:db-password@db/cairn",
		"CAIRN_SECRET_DB_PASS": "secret-value",
		"cairn_api_token":      "lower-value",
		"SITE":                 "example.org",
		"MY_CAIRN_HOME":        "/home/cairn",
	}[key]
	return v, ok
}

var leaked = []string{"token-value", "codec-key-value", "db-password", "secret-value", "lower-value"}

func TestCairnSettingsAreRefusedAtValidation(t *testing.T) {
	spec := map[string]any{
		"a": envRef("CAIRN_API_TOKEN"),
		"b": map[string]any{"envRef": map[string]any{"key": "cairn_codec_key", "default": "x"}},
		"c": `{{ env "CAIRN_DATABASE_URL" }}`,
		"d": []any{`prefix {{ env "Cairn_Secret_DB_PASS" | default "x" }}`},
		"e": envRef("MY_CAIRN_HOME"),
		"f": `{{ env "SITE" }}`,
	}
	issues := CheckSpec(spec)
	paths := []string{}
	for _, is := range issues {
		paths = append(paths, is.Path)
		assert.Contains(t, is.Message, "CAIRN_* variables are Cairn's own settings", is.Path)
	}
	assert.Equal(t, []string{"a", "b", "c", "d[0]"}, paths)

	err := CheckCondition(`eq (env "CAIRN_API_TOKEN") "x"`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `env "CAIRN_API_TOKEN" is refused`)
	assert.NoError(t, CheckCondition(`eq (env "SITE") "x"`))
}

func TestCairnSettingsAreRefusedAtResolution(t *testing.T) {
	ctx := Context{Env: serverEnv}
	for name, v := range map[string]any{
		"envRef":        envRef("CAIRN_API_TOKEN"),
		"envRef lower":  envRef("cairn_api_token"),
		"literal":       `{{ env "CAIRN_CODEC_KEY" }}`,
		"computed":      `{{ env (printf "%s_%s" "CAIRN" "DATABASE_URL") }}`,
		"piped":         `{{ "CAIRN_SECRET_DB_PASS" | env }}`,
		"in text":       `db={{ env (print "CAIRN_" "DATABASE_URL") }}`,
		"under default": `{{ env (print "CAIRN_" "API_TOKEN") | default "none" }}`,
	} {
		t.Run(name, func(t *testing.T) {
			out, _, err := Resolve(map[string]any{"v": v}, ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is refused")
			for _, s := range leaked {
				assert.NotContains(t, err.Error(), s)
				assert.NotContains(t, toJSONString(t, out), s)
			}
		})
	}

	_, err := Condition(`eq (env (print "CAIRN_" "API_TOKEN")) "token-value"`, ctx)
	assert.ErrorContains(t, err, "is refused")
	_, _, err = Render(`{{ env (print "CAIRN_" "CODEC_KEY") }}`, ctx)
	assert.ErrorContains(t, err, "is refused")

	out, missing, err := Resolve(map[string]any{"site": `{{ env "SITE" }}`, "home": envRef("MY_CAIRN_HOME")}, ctx)
	require.NoError(t, err)
	assert.True(t, missing.Empty())
	assert.Equal(t, map[string]any{"site": "example.org", "home": "/home/cairn"}, out)
}

func toJSONString(t *testing.T, v any) string {
	t.Helper()
	s, err := toJSONFunc(v)
	require.NoError(t, err)
	return s
}
