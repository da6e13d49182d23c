package config

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadTemporalSecurity(t *testing.T) {
	env := map[string]string{
		"CAIRN_TEMPORAL_TLS":             "true",
		"CAIRN_TEMPORAL_TLS_CA":          "/etc/cairn/ca.pem",
		"CAIRN_TEMPORAL_TLS_CERT":        "/etc/cairn/client.pem",
		"CAIRN_TEMPORAL_TLS_KEY":         "/etc/cairn/client-key.pem",
		"CAIRN_TEMPORAL_TLS_SERVER_NAME": "temporal.example",
		"CAIRN_TEMPORAL_API_KEY":         "tk_hidden",
	}
	c, err := Load(Values(func(k string) string { return env[k] }))
	require.NoError(t, err)
	require.NotNil(t, c.Temporal.TLS)
	assert.True(t, *c.Temporal.TLS)
	assert.Equal(t, "/etc/cairn/ca.pem", c.Temporal.CAFile)
	assert.Equal(t, "/etc/cairn/client.pem", c.Temporal.CertFile)
	assert.Equal(t, "/etc/cairn/client-key.pem", c.Temporal.KeyFile)
	assert.Equal(t, "temporal.example", c.Temporal.ServerName)
	assert.Equal(t, "tk_hidden", c.Temporal.APIKey)

	// Printed by mistake, the configuration does not show the key.
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(format, c), "tk_hidden", format)
		assert.NotContains(t, fmt.Sprintf(format, *c), "tk_hidden", format)
	}
}

func TestLoadTemporalTLSDefaultsToAuto(t *testing.T) {
	c, err := Load(Values(func(string) string { return "" }))
	require.NoError(t, err)
	assert.Nil(t, c.Temporal.TLS)
	assert.Equal(t, TemporalSecurity{}, c.Temporal)
}

func TestLoadRejectsABadTemporalTLS(t *testing.T) {
	_, err := Load(Values(func(k string) string { return map[string]string{"CAIRN_TEMPORAL_TLS": "maybe"}[k] }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `CAIRN_TEMPORAL_TLS: want true or false, got "maybe"`)
}
