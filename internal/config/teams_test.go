package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestTeamsSettings(t *testing.T) {
	load := func(env map[string]string) (*Config, error) {
		return Load(Values(func(k string) string { return env[k] }))
	}
	c, err := load(nil)
	require.NoError(t, err)
	assert.Equal(t, 365*24*time.Hour, c.AuditRetention, "the audit trail is kept a year by default")
	assert.Nil(t, c.OIDC, "no issuer, no OIDC")

	c, err = load(map[string]string{"CAIRN_AUDIT_RETENTION": "30d", "CAIRN_OIDC_ISSUER": "https://id.example", "CAIRN_OIDC_AUDIENCE": "cairn",
		"CAIRN_OIDC_GROUPS": `{"ops": [{"role": "deployer", "selector": "env=prod"}]}`})
	require.NoError(t, err)
	assert.Equal(t, 30*24*time.Hour, c.AuditRetention)
	require.NotNil(t, c.OIDC)
	assert.Equal(t, "email", c.OIDC.NameClaim, "default claim")
	assert.Equal(t, []model.Grant{{Role: model.RoleDeployer, Selector: "env=prod"}}, c.OIDC.Groups["ops"])

	for name, env := range map[string]map[string]string{
		"audit retention":  {"CAIRN_AUDIT_RETENTION": "forever"},
		"oidc no audience": {"CAIRN_OIDC_ISSUER": "https://id.example"},
		"oidc bad groups":  {"CAIRN_OIDC_ISSUER": "https://id.example", "CAIRN_OIDC_AUDIENCE": "cairn", "CAIRN_OIDC_GROUPS": "ops=deployer"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(env)
			require.Error(t, err)
		})
	}
}
