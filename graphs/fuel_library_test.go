package graphs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
)

// fuelLibrary is fuel-library's tasks.yaml files, kept beside the
// repository (see shared/testdata/fuel-library/SOURCE.md).
const fuelLibrary = "../../shared/testdata/fuel-library"

// fuelLibraryGraphs reads fuel-library's files as Cairn validates them:
// the deployment files together (they form the release's default graph),
// the provision, deletion and net-verification graphs one by one. It
// skips when the files are not there (and fails under CAIRN_REQUIRE_ALL).
func fuelLibraryGraphs(t *testing.T) map[string][]Source {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fuelLibrary, "*.yaml"))
	require.NoError(t, err)
	if len(paths) == 0 {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("no fuel-library files in %s", fuelLibrary)
		}
		t.Skipf("no fuel-library files in %s", fuelLibrary)
	}
	var deployment []Source
	groups := map[string][]Source{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		src := Source{Name: filepath.Base(p), Data: data}
		if strings.HasPrefix(src.Name, "deployment_") {
			deployment = append(deployment, src)
			continue
		}
		groups[strings.TrimSuffix(strings.TrimPrefix(src.Name, "graphs_"), "_tasks.yaml")] = []Source{src}
	}
	groups["release"] = deployment
	return groups
}

// fuelCatalogue is the built-in catalogue with every provisioning hook
// configured, as a server with CAIRN_HOOK_* set has it.
func fuelCatalogue(t *testing.T) *kinds.Catalogue {
	t.Helper()
	cat, err := kinds.Builtin().WithHooks(kinds.Hooks()...)
	require.NoError(t, err)
	return cat
}

// TestFuelLibraryValid reads every graph of fuel-library and requires no
// error. What Cairn accepts as Fuel did is a warning, counted by kind:
// duplicate YAML keys, and relations to tasks the graph does not have
// (groups of plugins' roles, provision's set_status_provisioned,
// net-verification's copy_cluster_configuration).
func TestFuelLibraryValid(t *testing.T) {
	groups := fuelLibraryGraphs(t)
	cat := fuelCatalogue(t)
	tests := []struct {
		graph             string
		tasks             int
		duplicates, drops int
	}{
		{"release", 204, 4, 2},
		{"provision", 10, 0, 1},
		{"deletion", 5, 0, 0},
		{"net-verification", 14, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.graph, func(t *testing.T) {
			srcs := groups[tt.graph]
			require.NotEmpty(t, srcs)
			docs, err := Parse(Options{Catalogue: cat}, srcs...)
			require.NoError(t, err)
			require.Len(t, docs.Graphs, 1)
			assert.Len(t, docs.Graphs[0].Tasks, tt.tasks)
			var dup, dropped int
			for _, w := range docs.Warnings {
				switch {
				case strings.Contains(w.Message, "the last value is used"):
					dup++
				case strings.HasSuffix(w.Message, relationDropped):
					dropped++
				default:
					t.Errorf("unexpected warning: %s", w)
				}
			}
			assert.Equal(t, tt.duplicates, dup, "duplicate keys")
			assert.Equal(t, tt.drops, dropped, "dropped relations")
		})
	}
}
