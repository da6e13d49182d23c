package graphe2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// TestTestPreAndTestPost runs Fuel's lifecycle checks on real nodes:
// test_pre exiting 0 skips the task where it says the task is done, and
// test_post exiting non-zero fails the task where it ran.
func TestTestPreAndTestPost(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	require.NoError(t, h.st.PutRelease(context.Background(), &model.Release{ID: "rel", Name: "release", Version: "2015.1.0-9.0"}))
	h.putGraph(model.LayerRelease, "rel", "pre", `
- id: install
  type: shell
  roles: [compute]
  test_pre: {cmd: "test -f installed.marker"}
  parameters: {cmd: "echo {CLUSTER_ID} {OPENSTACK_VERSION} > install.txt"}
`)
	h.putGraph(model.LayerRelease, "rel", "post", `
- id: configure
  type: shell
  roles: [compute]
  test_post: {cmd: "test \"$CAIRN_NODE\" != n3 || { echo not configured >&2; exit 3; }", timeout: 30}
  parameters: {cmd: "echo configured > configure.txt"}
- id: after
  type: shell
  roles: [compute]
  requires: [configure]
  parameters: {cmd: "echo after > after.txt"}
`)
	// n2 says the task is done there already.
	writeFile(t, filepath.Join(h.root("n2"), "installed.marker"), "")

	e := h.run(contract.GraphRequest{Types: []string{"pre"}})
	mustStatus(t, e, model.ExecCompleted)
	assert.Empty(t, readFile(t, filepath.Join(h.root("n2"), "install.txt")), "test_pre exited 0 on n2: the task must not run there")
	assert.Equal(t, h.cluster+" 2015.1.0-9.0\n", readFile(t, filepath.Join(h.root("n3"), "install.txt")), "placeholders resolved from the cluster and its release")
	assert.Equal(t, 1, e.Report.Unchanged+e.Report.Skipped, "report %+v", e.Report)

	e = h.run(contract.GraphRequest{Types: []string{"post"}})
	mustStatus(t, e, model.ExecFailed)
	assert.Equal(t, model.StatusSucceeded, stepStatus(e, "configure@n2"))
	assert.Equal(t, model.StatusFailed, stepStatus(e, "configure@n3"))
	assert.Equal(t, model.StatusDepFailed, stepStatus(e, "after@n3"))
	assert.Equal(t, "configured\n", readFile(t, filepath.Join(h.root("n3"), "configure.txt")), "the task ran before its test_post failed")
	assert.False(t, exists(filepath.Join(h.root("n3"), "after.txt")))
	require.Len(t, e.Report.Failures, 1)
	assert.Contains(t, e.Report.Failures[0].Error, "test_post exited 3")
	assert.Contains(t, e.Report.Failures[0].Error, "not configured")
}

// TestReexecuteOn runs a graph again and again: with events named, a task
// that already ran on a node is left as it ran unless its reexecute_on
// names one of them; without events every task runs as before.
func TestReexecuteOn(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: firewall
  type: shell
  roles: [compute]
  reexecute_on: [deploy_changes]
  parameters: {cmd: "echo x >> firewall.log"}
- id: install
  type: shell
  roles: [compute]
  parameters: {cmd: "echo x >> install.log"}
- id: config
  type: shell
  roles: [compute]
  refresh_on: [nova_config]
  parameters: {cmd: "echo x >> config.log"}
`)
	lines := func(node, file string) int {
		return strings.Count(readFile(t, filepath.Join(h.root(node), file)), "\n")
	}
	steps := []struct {
		name                      string
		events                    []string
		firewall, install, config int // lines on each node afterwards
	}{
		{"first run", nil, 1, 1, 1},
		{"an event no task re-runs on", []string{"upgrade"}, 1, 1, 1},
		{"deploy_changes re-runs firewall only", []string{"deploy_changes"}, 2, 1, 1},
		{"nova_config refreshes config only", []string{"nova_config"}, 2, 1, 2},
		{"no events: every task runs", nil, 3, 2, 3},
	}
	for _, st := range steps {
		e := h.run(contract.GraphRequest{Events: st.events})
		mustStatus(t, e, model.ExecCompleted)
		for _, n := range []string{"n2", "n3"} {
			assert.Equal(t, st.firewall, lines(n, "firewall.log"), "%s: %s: firewall", st.name, n)
			assert.Equal(t, st.install, lines(n, "install.log"), "%s: %s: install", st.name, n)
			assert.Equal(t, st.config, lines(n, "config.log"), "%s: %s: config", st.name, n)
		}
	}

	// A node where a task never ran gets it whatever the events.
	ctx := context.Background()
	cl, err := h.st.GetCluster(ctx, h.cluster)
	require.NoError(t, err)
	cl.Nodes = append(cl.Nodes, model.Node{ID: "n4", Name: "n4", Roles: []string{"compute"}})
	require.NoError(t, h.st.PutCluster(ctx, cl))
	require.NoError(t, h.locals.Sync(ctx))
	e := h.run(contract.GraphRequest{Events: []string{"deploy_changes"}})
	mustStatus(t, e, model.ExecCompleted)
	assert.Equal(t, 1, lines("n4", "install.log"))
	assert.Equal(t, 1, lines("n4", "config.log"))
	assert.Equal(t, 2, lines("n2", "install.log"), "n2 keeps its install as it ran")
	assert.Equal(t, 4, lines("n2", "firewall.log"), "deploy_changes re-runs firewall on n2")
}
