package compose

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/internal/testenv"
)

// serverModule is the module the Temporal server is built from.
const serverModule = "go.temporal.io/server"

// clusterTopology is what scripts/temporal-cluster.sh says it runs.
type clusterTopology struct {
	version, uiVersion, shards string
	dynamicConfig              string
	services                   []string // one per host
	searchAttributes           map[string]string
}

func describeCluster(t *testing.T) clusterTopology {
	t.Helper()
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	out, err := exec.Command(filepath.Join(root, "scripts", "temporal-cluster.sh"), "describe").Output()
	require.NoError(t, err, "temporal-cluster.sh describe")
	var topo clusterTopology
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		switch {
		case fields["version"] != "":
			topo.version = fields["version"]
		case fields["ui_version"] != "":
			topo.uiVersion = fields["ui_version"]
		case fields["shards"] != "":
			topo.shards = fields["shards"]
		case fields["dynamic_config"] != "":
			topo.dynamicConfig = fields["dynamic_config"]
		case fields["search_attributes"] != "":
			topo.searchAttributes = map[string]string{}
			for _, sa := range strings.Split(fields["search_attributes"], ",") {
				name, typ, _ := strings.Cut(sa, ":")
				topo.searchAttributes[name] = typ
			}
		case fields["host"] != "":
			topo.services = append(topo.services, fields["service"])
		}
	}
	require.NotEmpty(t, topo.version, "describe: %s", out)
	return topo
}

// docker-compose.yml and scripts/temporal-cluster.sh (`make cluster`, the
// topology tests) run the same Temporal: the same hosts (a frontend, two
// history hosts, matching, worker), the same server version, the same
// number of history shards and the same dynamic config file; and that
// version is the dev server's, so what the tests run on the dev server and
// on the cluster is one Temporal.
func TestComposeTemporalIsTheClusterScripts(t *testing.T) {
	topo := describeCluster(t)
	project := load(t)
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	tag := strings.TrimPrefix(topo.version, "v")

	var services []string
	for _, svc := range project.Services {
		image, imageTag, _ := strings.Cut(svc.Image, ":")
		if !strings.HasPrefix(image, "temporalio/") || image == "temporalio/ui" {
			continue
		}
		assert.Equal(t, tag, imageTag, "%s runs %s, the script builds %s", svc.Name, svc.Image, topo.version)
		if image != "temporalio/server" {
			continue
		}
		services = append(services, envOf(svc, "SERVICES"))
		assert.Equal(t, topo.shards, envOf(svc, "NUM_HISTORY_SHARDS"), "%s: history shards", svc.Name)
		assert.Equal(t, filepath.Join(root, topo.dynamicConfig), mountedFrom(svc, envOf(svc, "DYNAMIC_CONFIG_FILE_PATH")),
			"%s: dynamic config", svc.Name)
	}
	slices.Sort(services)
	want := slices.Clone(topo.services)
	slices.Sort(want)
	assert.Equal(t, want, services, "the Temporal hosts of docker-compose.yml and of the script")
	assert.Equal(t, []string{"frontend", "history", "history", "matching", "worker"}, want, "the production topology")

	cairn, err := project.GetService("cairn")
	require.NoError(t, err)
	assert.Equal(t, types.ServiceConditionCompletedSuccessfully, cairn.DependsOn["temporal-namespace"].Condition,
		"the server starts once the namespace is registered")
	schema, err := project.GetService("temporal-schema")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(schema.Command, " "), "update-schema", "the schema job sets the schema up with Temporal's SQL tool")

	ui, err := project.GetService("temporal-ui")
	require.NoError(t, err)
	assert.Equal(t, "temporalio/ui:"+strings.TrimPrefix(topo.uiVersion, "v"), ui.Image, "the script's UI and compose's")

	frontend, err := project.GetService("temporal")
	require.NoError(t, err)
	assert.Equal(t, "frontend", envOf(frontend, "SERVICES"), "clients dial the service named temporal")
	assert.True(t, publishes(frontend, "7233"))

	bin, err := testenv.TemporalBinary()
	require.NoError(t, err)
	info, err := buildinfo.ReadFile(bin)
	require.NoError(t, err, "build info of %s", bin)
	i := slices.IndexFunc(info.Deps, func(m *debug.Module) bool { return m.Path == serverModule })
	require.GreaterOrEqual(t, i, 0, "%s has no %s", bin, serverModule)
	assert.Equal(t, info.Deps[i].Version, topo.version, "the cluster's server differs from the dev server's")

	// The script registers Cairn's search attributes, as the dev server does.
	attrs := map[string]string{}
	for name, typ := range searchattr.All() {
		attrs[name] = map[enums.IndexedValueType]string{enums.INDEXED_VALUE_TYPE_KEYWORD: "Keyword", enums.INDEXED_VALUE_TYPE_BOOL: "Bool"}[typ]
	}
	assert.Equal(t, attrs, topo.searchAttributes, "the script's search attributes")
}

// mountedFrom is the host file mounted where a Temporal container reads
// path (relative to its /etc/temporal working directory); "" when none is.
func mountedFrom(svc types.ServiceConfig, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join("/etc/temporal", path)
	}
	for _, v := range svc.Volumes {
		if v.Target == path {
			return v.Source
		}
	}
	return ""
}

// With the TLS override every Temporal host, not only the frontend, serves
// and dials its peers over mutual TLS with the mounted certificates.
func TestComposeTLSCoversEveryTemporalHost(t *testing.T) {
	project := loadWith(t, nil, "docker-compose.yml", "docker-compose.tls.yml")
	hosts := 0
	for _, svc := range project.Services {
		if !strings.HasPrefix(svc.Image, "temporalio/server:") {
			continue
		}
		hosts++
		assert.Equal(t, "true", envOf(svc, "TEMPORAL_TLS_REQUIRE_CLIENT_AUTH"), svc.Name)
		assert.Equal(t, "temporal", envOf(svc, "TEMPORAL_TLS_INTERNODE_SERVER_NAME"), svc.Name)
		for _, k := range []string{"TEMPORAL_TLS_SERVER_CERT", "TEMPORAL_TLS_SERVER_KEY", "TEMPORAL_TLS_SERVER_CA_CERT"} {
			path := envOf(svc, k)
			mounted := slices.ContainsFunc(svc.Volumes, func(v types.ServiceVolumeConfig) bool {
				return v.ReadOnly && strings.HasPrefix(path, v.Target+"/")
			})
			assert.True(t, mounted, "%s: %s=%q is not in a read-only mount", svc.Name, k, path)
		}
	}
	assert.Equal(t, 5, hosts)
	ns, err := project.GetService("temporal-namespace")
	require.NoError(t, err)
	assert.NotEmpty(t, envOf(ns, "TEMPORAL_TLS_CERT"), "the namespace's registration dials the frontend over TLS")
}
