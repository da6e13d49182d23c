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
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatalf("load %v: %v", files, err)
	}
	return project
}

func TestComposeFileAgreesWithConfiguration(t *testing.T) {
	project := load(t)
	for _, want := range []string{"postgres", "temporal", "temporal-ui", "cairn", "agent-1", "agent-2"} {
		if _, err := project.GetService(want); err != nil {
			t.Errorf("service %q missing: %v", want, err)
		}
	}
	for _, svc := range project.Services {
		for name := range svc.Environment {
			if strings.HasPrefix(name, "CAIRN_") {
				if _, ok := config.Lookup(name); !ok {
					t.Errorf("service %s sets %s, which Cairn does not read", svc.Name, name)
				}
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
	if env(cairn, "CAIRN_API_TOKEN") == "" {
		t.Error("the server listens beyond loopback, so it needs CAIRN_API_TOKEN")
	}
	_, apiPort, err := net.SplitHostPort(env(cairn, "CAIRN_API_ADDR"))
	if err != nil {
		t.Fatalf("CAIRN_API_ADDR: %v", err)
	}
	if !publishes(cairn, apiPort) {
		t.Errorf("cairn does not publish its API port %s: %+v", apiPort, cairn.Ports)
	}
	if !strings.HasPrefix(env(cairn, "CAIRN_DATABASE_URL"), "postgres://") {
		t.Error("cairn should use the compose PostgreSQL")
	}

	temporal, _ := project.GetService("temporal")
	for _, svc := range []string{"cairn", "agent-1", "agent-2"} {
		s, _ := project.GetService(svc)
		host, port, err := net.SplitHostPort(env(s, "CAIRN_TEMPORAL_ADDRESS"))
		if err != nil || host != "temporal" {
			t.Errorf("%s: CAIRN_TEMPORAL_ADDRESS should point at the temporal service: %v", svc, err)
		}
		if !publishes(temporal, port) {
			t.Errorf("temporal does not expose %s", port)
		}
	}
	var nodes []string
	for _, svc := range []string{"agent-1", "agent-2"} {
		s, _ := project.GetService(svc)
		if !slices.Equal([]string(s.Command), []string{"agent"}) {
			t.Errorf("%s runs %v, want agent", svc, s.Command)
		}
		if env(s, "CAIRN_CLUSTER") == "" || env(s, "CAIRN_NODE") == "" {
			t.Errorf("%s needs CAIRN_CLUSTER and CAIRN_NODE", svc)
		}
		// Agents reach their node's step data through the server's agent
		// API with a node token, never the database.
		if got := env(s, "CAIRN_DATABASE_URL"); got != "" {
			t.Errorf("%s has database credentials %q", svc, got)
		}
		if u, err := url.Parse(env(s, "CAIRN_SERVER")); err != nil || u.Hostname() != "cairn" || u.Port() != apiPort {
			t.Errorf("%s: CAIRN_SERVER %q should point at the cairn service's API", svc, env(s, "CAIRN_SERVER"))
		}
		if _, ok := s.Environment["CAIRN_NODE_TOKEN"]; !ok {
			t.Errorf("%s needs CAIRN_NODE_TOKEN", svc)
		}
		nodes = append(nodes, env(s, "CAIRN_NODE"))
	}
	if nodes[0] == nodes[1] {
		t.Errorf("both agents serve node %s", nodes[0])
	}
	ui, _ := project.GetService("temporal-ui")
	if !publishes(ui, "8080") || !strings.Contains(env(cairn, "CAIRN_TEMPORAL_UI_URL"), "8233") {
		t.Error("the Temporal UI should be published on 8233 and linked from Cairn")
	}
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
