package compose

import (
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
)

// By default nothing is published beyond loopback: not Temporal's
// frontend, not its UI, not the API; PostgreSQL is not published at all.
// CAIRN_BIND moves every published port to the address it names.
func TestComposePublishesOnLoopbackUnlessTold(t *testing.T) {
	for bind, want := range map[string]string{"": "127.0.0.1", "10.0.0.5": "10.0.0.5"} {
		env := map[string]string{}
		if bind != "" {
			env["CAIRN_BIND"] = bind
		}
		project := loadWith(t, env, "docker-compose.yml")
		published := 0
		for _, svc := range project.Services {
			for _, p := range svc.Ports {
				published++
				assert.Equal(t, want, p.HostIP, "%s publishes %d on %q", svc.Name, p.Target, p.HostIP)
			}
		}
		assert.Equal(t, 4, published, "the Temporal frontend, its UI, the UI's codec proxy and the API")
		pg, err := project.GetService("postgres")
		require.NoError(t, err)
		assert.Empty(t, pg.Ports, "PostgreSQL is for the services here only")
	}
}

// The TLS override turns on mutual TLS for Temporal's frontend and gives
// every client of it — the UI, the server and the agents — the CA, a client
// certificate and the server name, all from the mounted directory.
func TestComposeTLSOverride(t *testing.T) {
	project := loadWith(t, nil, "docker-compose.yml", "docker-compose.tls.yml")
	env := func(svc types.ServiceConfig, k string) string {
		if v := svc.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	mounted := func(svc types.ServiceConfig, path string) bool {
		for _, v := range svc.Volumes {
			if strings.HasPrefix(path, v.Target+"/") && v.ReadOnly {
				return true
			}
		}
		return false
	}
	temporal, err := project.GetService("temporal")
	require.NoError(t, err)
	assert.Equal(t, "true", env(temporal, "TEMPORAL_TLS_REQUIRE_CLIENT_AUTH"))
	for _, k := range []string{"TEMPORAL_TLS_FRONTEND_CERT", "TEMPORAL_TLS_FRONTEND_KEY", "TEMPORAL_TLS_CLIENT1_CA_CERT"} {
		assert.True(t, mounted(temporal, env(temporal, k)), "temporal: %s=%q is not in a read-only mount", k, env(temporal, k))
	}

	for _, name := range []string{"cairn", "agent-1", "agent-2"} {
		svc, err := project.GetService(name)
		require.NoError(t, err)
		for _, k := range []string{"CAIRN_TEMPORAL_TLS_CA", "CAIRN_TEMPORAL_TLS_CERT", "CAIRN_TEMPORAL_TLS_KEY"} {
			_, known := config.Lookup(k)
			require.True(t, known, k)
			assert.True(t, mounted(svc, env(svc, k)), "%s: %s=%q is not in a read-only mount", name, k, env(svc, k))
		}
		assert.Equal(t, "temporal", env(svc, "CAIRN_TEMPORAL_TLS_SERVER_NAME"), name)
		// The base file's settings survive the override.
		assert.Equal(t, "temporal:7233", env(svc, "CAIRN_TEMPORAL_ADDRESS"), name)
	}
	ui, err := project.GetService("temporal-ui")
	require.NoError(t, err)
	assert.True(t, mounted(ui, env(ui, "TEMPORAL_TLS_CERT")), "the UI needs a client certificate")
	assert.Equal(t, "temporal", env(ui, "TEMPORAL_TLS_SERVER_NAME"))
}
