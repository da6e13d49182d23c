package graphs

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
)

// fuelLibrary is fuel-library's tasks.yaml files, kept beside the
// repository (see shared/testdata/fuel-library/SOURCE.md).
const fuelLibrary = "../../shared/testdata/fuel-library"

// taskTypeCauses are the messages of the problems the task types, their
// parameters and the task shapes Fuel wrote would cause: none may remain.
var taskTypeCauses = []string{
	"unknown task type", "unknown kind", "permissions", "cross_depends", "cross-depends",
	"cross_depended_by", "cross-depended-by", "duplicate key", "provisioning hook",
}

// TestFuelLibraryTaskTypes reads every file of fuel-library: the deployment
// files together (they form the release's default graph), the provision,
// deletion and net-verification graphs one by one. No error may come from
// task types, permissions, the shape of cross-depends or duplicate keys.
// What remains is outside this part of the work, and the test checks
// each error is one of these: values written as yaql expressions
// ({yaql_exp: …}, conditions included), and references to tasks no file of
// the graph defines (required_for, groups).
func TestFuelLibraryTaskTypes(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(fuelLibrary, "*.yaml"))
	require.NoError(t, err)
	if len(paths) == 0 {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("no fuel-library files in %s", fuelLibrary)
		}
		t.Skipf("no fuel-library files in %s", fuelLibrary)
	}
	cat, err := kinds.Builtin().WithHooks(kinds.Hooks()...)
	require.NoError(t, err)
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
		groups[src.Name] = []Source{src}
	}
	groups["deployment (release default graph)"] = deployment
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	var warnings, yaqls, refs int
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			docs, err := Parse(Options{Catalogue: cat}, groups[name]...)
			require.NotNil(t, docs)
			warnings += len(docs.Warnings)
			for _, w := range docs.Warnings {
				assert.True(t, strings.Contains(w.Message, "the last value is used") || strings.HasSuffix(w.Message, relationDropped), "%s", w)
			}
			var es Errors
			if err != nil {
				var ok bool
				es, ok = err.(Errors)
				require.True(t, ok, "%v", err)
			}
			for _, e := range es {
				yaql, ref := isYaqlError(groups[name], e), strings.Contains(e.Message, "no such task in graph")
				if !yaql {
					for _, cause := range taskTypeCauses {
						assert.NotContains(t, e.Error(), cause)
					}
				}
				assert.True(t, yaql || ref, "neither a yaql expression nor a reference to a missing task: %s", e)
				if yaql {
					yaqls++
				} else {
					refs++
				}
			}
		})
	}
	t.Logf("%d duplicate keys accepted with a warning; left: %d yaql expressions, %d references to missing tasks", warnings, yaqls, refs)
}

// isYaqlError reports whether an error is about a value written as a yaql
// expression: the line it names, or one of the next two, holds yaql_exp.
func isYaqlError(srcs []Source, e Error) bool {
	if strings.Contains(e.Path, "condition") || strings.Contains(e.Message, "yaql") {
		return true
	}
	for _, s := range srcs {
		if s.Name != e.Pos.Source || e.Pos.Line == 0 {
			continue
		}
		lines := strings.Split(string(s.Data), "\n")
		for i := e.Pos.Line - 1; i < min(len(lines), e.Pos.Line+2); i++ {
			if strings.Contains(lines[i], "yaql_exp") {
				return true
			}
		}
	}
	return false
}
