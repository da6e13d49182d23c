// Package compose checks docker-compose.yml against Cairn's configuration:
// the file must load with the compose-spec loader, every CAIRN_* variable in
// it must be one Cairn reads, and the ports must be the ones Cairn and
// Temporal listen on.
package compose

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
)

func load(t *testing.T) *types.Project {
	t.Helper()
	return loadWith(t, nil, "docker-compose.yml")
}

// loadWith loads the compose files (the later overriding the earlier) with
// env added to the environment docker compose would see.
func loadWith(t *testing.T, env map[string]string, files ...string) *types.Project {
	t.Helper()
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	environment := types.Mapping{"CAIRN_API_TOKEN": "test-token"}
	for k, v := range env {
		environment[k] = v
	}
	var configs []types.ConfigFile
	for _, f := range files {
		configs = append(configs, types.ConfigFile{Filename: filepath.Join(root, f)})
	}
	project, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: configs,
		Environment: environment,
	}, func(o *loader.Options) { o.SetProjectName("cairn", true) })
	require.NoError(t, err, "load %v: %v", files, err)
	return project
}

func TestComposeFileAgreesWithConfiguration(t *testing.T) {
	project := load(t)
	for _, want := range []string{"postgres", "temporal", "temporal-history-1", "temporal-history-2", "temporal-matching",
		"temporal-worker", "temporal-schema", "temporal-namespace", "temporal-ui", "cairn", "agent-1", "agent-2"} {
		_, err := project.GetService(want)
		assert.NoError(t, err, "service %q missing: %v", want, err)
	}
	for _, svc := range project.Services {
		for name := range svc.Environment {
			if strings.HasPrefix(name, "CAIRN_") {
				_, ok := config.Lookup(name)
				assert.True(t, ok, "service %s sets %s, which Cairn does not read", svc.Name, name)
			}
		}
	}

	cairn, _ := project.GetService("cairn")
	env := func(svc types.ServiceConfig, k string) string {
		if v := svc.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	assert.NotEmpty(t, env(cairn, "CAIRN_API_TOKEN"), "the server listens beyond loopback, so it needs CAIRN_API_TOKEN")
	_, apiPort, err := net.SplitHostPort(env(cairn, "CAIRN_API_ADDR"))
	require.NoError(t, err, "CAIRN_API_ADDR")
	assert.True(t, publishes(cairn, apiPort), "cairn does not publish its API port %s: %+v", apiPort, cairn.Ports)
	assert.True(t, strings.HasPrefix(env(cairn, "CAIRN_DATABASE_URL"), "postgres://"), "cairn should use the compose PostgreSQL")

	temporal, _ := project.GetService("temporal")
	for _, svc := range []string{"cairn", "agent-1", "agent-2"} {
		s, _ := project.GetService(svc)
		host, port, err := net.SplitHostPort(env(s, "CAIRN_TEMPORAL_ADDRESS"))
		require.NoError(t, err, "%s: CAIRN_TEMPORAL_ADDRESS should point at the temporal service: %v", svc, err)
		assert.Equal(t, "temporal", host, "%s: CAIRN_TEMPORAL_ADDRESS should point at the temporal service: %v", svc, err)
		assert.True(t, publishes(temporal, port), "temporal does not expose %s", port)
	}
	var nodes []string
	for _, svc := range []string{"agent-1", "agent-2"} {
		s, _ := project.GetService(svc)
		assert.True(t, slices.Equal([]string(s.Command), []string{"agent"}), "%s runs %v, want agent", svc, s.Command)
		require.NotEmpty(t, env(s, "CAIRN_CLUSTER"), "%s needs CAIRN_CLUSTER and CAIRN_NODE", svc)
		assert.NotEmpty(t, env(s, "CAIRN_NODE"), "%s needs CAIRN_CLUSTER and CAIRN_NODE", svc)
		// Agents reach their node's step data through the server's agent
		// API with a node token, never the database.
		got := env(s, "CAIRN_DATABASE_URL")
		assert.Empty(t, got, "%s has database credentials %q", svc, got)
		u, err := url.Parse(env(s, "CAIRN_SERVER"))
		require.NoError(t, err, "%s: CAIRN_SERVER %q should point at the cairn service's API", svc, env(s, "CAIRN_SERVER"))
		require.Equal(t, "cairn", u.Hostname(), "%s: CAIRN_SERVER %q should point at the cairn service's API", svc, env(s, "CAIRN_SERVER"))
		assert.Equal(t, apiPort, u.Port(), "%s: CAIRN_SERVER %q should point at the cairn service's API", svc, env(s, "CAIRN_SERVER"))
		_, ok := s.Environment["CAIRN_NODE_TOKEN"]
		assert.True(t, ok, "%s needs CAIRN_NODE_TOKEN", svc)
		nodes = append(nodes, env(s, "CAIRN_NODE"))
	}
	assert.NotEqual(t, nodes[1], nodes[0], "both agents serve node")
	ui, _ := project.GetService("temporal-ui")
	require.True(t, publishes(ui, "8080"), "the Temporal UI should be published on 8233 and linked from Cairn")
	assert.Contains(t, env(cairn, "CAIRN_TEMPORAL_UI_URL"), "8233", "the Temporal UI should be published on 8233 and linked from Cairn")
}

func publishes(svc types.ServiceConfig, port string) bool {
	for _, p := range svc.Ports {
		if p.Target == mustAtoi(port) {
			return true
		}
	}
	return false
}

func mustAtoi(s string) uint32 {
	var n uint32
	for _, c := range s {
		n = n*10 + uint32(c-'0')
	}
	return n
}
