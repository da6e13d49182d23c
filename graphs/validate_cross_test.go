package graphs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// TestFuelLibraryHooksOfflineAndOnServer reads fuel-library's provision and
// deletion graphs with the three catalogues that meet them: offline
// (cairn validate: hooks are the server's settings), a server without
// CAIRN_HOOK_* and a server with them.
func TestFuelLibraryHooksOfflineAndOnServer(t *testing.T) {
	groups := fuelLibraryGraphs(t)
	offline := kinds.Builtin().WithHooksElsewhere()
	configuredHere, err := offline.WithHooks(kinds.Hooks()...)
	require.NoError(t, err)
	hooks := map[string][]string{ // graph → "line:col: path: hook" of its hook tasks
		"provision": {"55:3: [5].parameters: move_to_bootstrap"},
		"deletion":  {"27:3: [3].parameters: move_to_bootstrap", "40:3: [4].parameters: erase_node"},
	}
	for graph, want := range hooks {
		srcs := groups[graph]
		require.NotEmpty(t, srcs)
		file := srcs[0].Name
		var offlineWarnings, serverErrors []string
		for _, w := range want {
			at, hook, _ := strings.Cut(w, ": [")
			path, hook, _ := strings.Cut(hook, ": ")
			setting := kinds.HookSetting(hook)
			offlineWarnings = append(offlineWarnings, fmt.Sprintf("%s:%s: [%s: no command is configured here for the provisioning hook %s: the server that executes this graph must set %s, or refuses it", file, at, path, hook, setting))
			serverErrors = append(serverErrors, fmt.Sprintf("%s:%s: [%s: no command is configured for the provisioning hook %s: set %s on the server", file, at, path, hook, setting))
		}
		t.Run(graph+"/offline", func(t *testing.T) {
			docs, err := Parse(Options{Catalogue: offline}, srcs...)
			require.NoError(t, err, "a hook not configured where validate runs is no error")
			var got []string
			for _, w := range docs.Warnings {
				if strings.Contains(w.Message, "provisioning hook") {
					got = append(got, w.Error())
				}
			}
			assert.Equal(t, offlineWarnings, got)
		})
		t.Run(graph+"/offline-configured", func(t *testing.T) {
			docs, err := Parse(Options{Catalogue: configuredHere}, srcs...)
			require.NoError(t, err)
			for _, w := range docs.Warnings {
				assert.NotContains(t, w.Message, "provisioning hook", "configured here: nothing to warn of")
			}
		})
		t.Run(graph+"/server", func(t *testing.T) {
			_, err := Parse(Options{Catalogue: kinds.Builtin()}, srcs...)
			assert.Equal(t, serverErrors, errorStrings(err), "where the graph executes, a hook with no command is an error")
			_, err = Parse(Options{Catalogue: fuelCatalogue(t)}, srcs...)
			assert.NoError(t, err)
		})
	}
}

// TestCrossDependsNamingNoTask: every cross dependency naming no task is
// an error when the graph is read, all of them at once with their lines,
// whichever spelling or form Fuel's loader accepted.
func TestCrossDependsNamingNoTask(t *testing.T) {
	const doc = `- id: primary-database
  type: stage
- id: database
  type: stage
  cross-depends:
    - name: primary-databse
      role: [primary-controller]
    - name: primary-database
  cross-depended-by:
    - name: keystone
    - name: /^openstack-.*/
- id: hiera
  type: stage
  cross_depends: {name: globalz, role: self}
- id: ok
  type: stage
  cross_depends: [{name: hiera}, {name: /^nothing-matches$/}]
  cross_depended_by: [{name: database, role: self}]
`
	tests := []struct {
		name    string
		opts    Options
		want    []string
		wantErr bool
	}{
		{"whole graph", Options{}, []string{
			`g.yaml:6:13: [1].cross-depends[0].name: cross dependency "primary-databse": no such task in graph "default"`,
			`g.yaml:10:13: [1].cross-depended-by[0].name: cross dependency "keystone": no such task in graph "default"`,
			`g.yaml:14:25: [2].cross_depends.name: cross dependency "globalz": no such task in graph "default"`,
		}, true},
		{"layer (checked once merged)", Options{Partial: true}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.opts, Source{Name: "g.yaml", Data: []byte(doc)})
			assert.Equal(t, tt.want, errorStrings(err))
		})
	}
}

// TestValidateGraphCrossDepends: a graph merged in code reports its
// dangling cross dependencies at the tasks' positions.
func TestValidateGraphCrossDepends(t *testing.T) {
	pos := model.Position{Source: "layer.yaml", Line: 7, Column: 3}
	g := &model.Graph{Type: "upgrade", Tasks: []*model.Task{
		{ID: "a", Type: model.TaskStage},
		{ID: "b", Type: model.TaskStage, Pos: pos, CrossDepends: []model.CrossDep{{Name: "a"}, {Name: "gone"}}},
	}}
	assert.Equal(t, []string{`layer.yaml:7:3: tasks[1].cross_depends[1].name: cross dependency "gone": no such task in graph "upgrade"`},
		errorStrings(ValidateGraph(nil, g).Err()))
}
