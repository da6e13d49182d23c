package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadDefaultsAndOverrides(t *testing.T) {
	env := map[string]string{"CAIRN_API_TOKEN": "s3cret", "CAIRN_BODY_LIMIT": "1MiB", "CAIRN_FETCH_SCHEMES": "https, FILE",
		"CAIRN_EVENTS_MAX_CLIENTS": "7"}
	c, err := Load(Values(func(k string) string { return env[k] }))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7233", c.TemporalAddress, "defaults not applied: %+v", c)
	require.Equal(t, "cairn", c.TaskQueue, "defaults not applied: %+v", c)
	require.Equal(t, 10, c.Parallelism, "defaults not applied: %+v", c)
	require.Equal(t, 2*time.Minute, c.NodeWait, "defaults not applied: %+v", c)
	require.Equal(t, "s3cret", c.APIToken, "overrides not applied: %+v", c)
	require.Equal(t, int64(1<<20), c.BodyLimit, "overrides not applied: %+v", c)
	require.Equal(t, int64(64<<20), c.UploadMaxBytes, "defaults not applied: %+v", c)
	require.Equal(t, int64(256<<20), c.UploadQuota, "defaults not applied: %+v", c)
	require.Equal(t, "1h0m0s", c.UploadTTL.String(), "defaults not applied: %+v", c)
	require.Empty(t, c.DebugAddr, "profiles are off by default")
	require.Len(t, c.FetchSchemes, 2, "schemes")
	require.Equal(t, "file", c.FetchSchemes[1], "schemes = %v", c.FetchSchemes)
	assert.Equal(t, 32, c.EventsMaxExecutions, "default")
	assert.Equal(t, 7, c.EventsMaxClients, "override")
}

func TestLoadRejectsBadValues(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"parallelism":                   {"CAIRN_PARALLELISM": "0"},
		"body limit":                    {"CAIRN_BODY_LIMIT": "lots"},
		"api addr":                      {"CAIRN_API_ADDR": "nohostport"},
		"events executions":             {"CAIRN_EVENTS_MAX_EXECUTIONS": "0"},
		"events clients":                {"CAIRN_EVENTS_MAX_CLIENTS": "many"},
		"node wait":                     {"CAIRN_NODE_WAIT": "-1s"},
		"upload max":                    {"CAIRN_UPLOAD_MAX_BYTES": "0"},
		"upload quota below one upload": {"CAIRN_UPLOAD_MAX_BYTES": "64MiB", "CAIRN_UPLOAD_QUOTA": "32MiB"},
		"upload ttl":                    {"CAIRN_UPLOAD_TTL": "forever"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(Values(func(k string) string { return env[k] }))
			require.Error(t, err, "want an error")
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"10MB": 10e6, "512KiB": 512 << 10, "1048576": 1048576, "2 M": 2 << 20} {
		got, err := ParseSize(in)
		require.NoError(t, err, "ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		assert.Equal(t, want, got, "ParseSize(%q) = %d, %v; want %d", in, got, err, want)
	}
}
