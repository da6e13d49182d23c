package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func parseParamFlags(t *testing.T, args ...string) (model.ApplyParams, error) {
	t.Helper()
	var pf paramFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	pf.register(fs)
	require.NoError(t, fs.Parse(args))
	return pf.params()
}

func TestParamFlags(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "prod.env")
	require.NoError(t, os.WriteFile(envFile, []byte("# site settings\n\nSITE=staging\nexport REGION = eu-west\nQUOTED=\"a b\"\nEMPTY=\nURL=http://x/?a=b\n"), 0o600))
	secretsFile := filepath.Join(dir, "prod.secrets")
	require.NoError(t, os.WriteFile(secretsFile, []byte("DB_PASSWORD='pw from file'\n"), 0o600))

	p, err := parseParamFlags(t, "--env-file", envFile, "--env", "SITE=prod", "--env", "EXTRA=1",
		"--secrets-file", secretsFile, "--secret", "API_TOKEN=t=k")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"SITE": "prod", "REGION": "eu-west", "QUOTED": "a b", "EMPTY": "", "URL": "http://x/?a=b", "EXTRA": "1",
	}, p.EnvRefs)
	assert.Equal(t, map[string]string{"DB_PASSWORD": "pw from file", "API_TOKEN": "t=k"}, p.Secrets)

	t.Run("no flags: no parameters", func(t *testing.T) {
		p, err := parseParamFlags(t)
		require.NoError(t, err)
		assert.True(t, p.Empty())
	})
	t.Run("a pair without = is refused", func(t *testing.T) {
		_, err := parseParamFlags(t, "--env", "SITE")
		require.ErrorContains(t, err, "--env: want KEY=VALUE")
		_, err = parseParamFlags(t, "--secret", "=value")
		require.ErrorContains(t, err, "--secret: want KEY=VALUE")
	})
	t.Run("a bad line is named by number, its value never shown", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.secrets")
		require.NoError(t, os.WriteFile(bad, []byte("# ok\nGOOD=x\nhunter2-no-key\n"), 0o600))
		_, err := parseParamFlags(t, "--secrets-file", bad)
		require.ErrorContains(t, err, "line 3")
		assert.NotContains(t, err.Error(), "hunter2")
	})
	t.Run("a missing file", func(t *testing.T) {
		_, err := parseParamFlags(t, "--env-file", filepath.Join(dir, "nope"))
		require.Error(t, err)
	})
}

// TestVarFlags: --var-file is a YAML or JSON object of any values, --var
// a string that wins over it; a file that is not an object is refused.
func TestVarFlags(t *testing.T) {
	dir := t.TempDir()
	yamlFile := filepath.Join(dir, "vars.yaml")
	require.NoError(t, os.WriteFile(yamlFile, []byte("region: europe-west1\nsize: 200\nzones: [b, c]\n"), 0o600))
	p, err := parseParamFlags(t, "--var-file", yamlFile, "--var", "region=us-east1", "--var", "name=www")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"region": "us-east1", "size": 200, "zones": []any{"b", "c"}, "name": "www"}, p.Vars)

	jsonFile := filepath.Join(dir, "vars.json")
	require.NoError(t, os.WriteFile(jsonFile, []byte(`{"region": "asia-east1"}`), 0o600))
	p, err = parseParamFlags(t, "--var-file", jsonFile)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"region": "asia-east1"}, p.Vars)

	bad := filepath.Join(dir, "list.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("- a\n- b\n"), 0o600))
	_, err = parseParamFlags(t, "--var-file", bad)
	require.ErrorContains(t, err, "want a YAML or JSON object of variables")
	_, err = parseParamFlags(t, "--var", "novalue")
	require.ErrorContains(t, err, "--var")
}
