package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// fuelShapedGraph is the complete Fuel-shaped graph the end-to-end tests
// run.
var fuelShapedGraph = filepath.Join("..", "..", "internal", "graphe2e", "testdata", "fuel_shaped", "tasks.yaml")

const fuelShapedNodes = `- {id: n1, name: n1, roles: [primary-controller]}
- {id: n2, name: n2, roles: [controller]}
- {id: n3, name: n3, roles: [compute]}
- {id: n4, name: n4, roles: [compute], mode: agent}
`

func setFuelHooks(t *testing.T) {
	for _, v := range []string{"CAIRN_HOOK_MOVE_TO_BOOTSTRAP", "CAIRN_HOOK_ERASE_NODE", "CAIRN_HOOK_COBBLER_SYNC"} {
		t.Setenv(v, "/usr/local/bin/hook")
	}
}

func TestFuelShapedGraphValidates(t *testing.T) {
	setFuelHooks(t)
	code, stdout, stderr := runCLI(t, "validate", fuelShapedGraph)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "1 graph (29 tasks): valid")
	assert.Empty(t, stderr, "no warnings")

	t.Setenv("CAIRN_HOOK_ERASE_NODE", "")
	code, _, stderr = runCLI(t, "validate", fuelShapedGraph)
	assert.Equal(t, 0, code, "the hook is the server's setting: offline, a warning")
	assert.Contains(t, stderr, "warning: "+fuelShapedGraph+":222:3: [28].parameters: no command is configured here for the provisioning hook erase_node: the server that executes this graph must set CAIRN_HOOK_ERASE_NODE")
}

// graph show expands the graph onto the cluster: each node gets the tasks
// of its roles and groups, the groups run in order (primary-controller,
// controller, compute) with their strategies as caps, stages and master
// tasks run once on the control plane.
func TestFuelShapedGraphShow(t *testing.T) {
	setFuelHooks(t)
	nodes := filepath.Join(writeFiles(t, map[string]string{"nodes.yaml": fuelShapedNodes}), "nodes.yaml")
	code, stdout, stderr := runCLI(t, "graph", "show", fuelShapedGraph, "--nodes", nodes, "-o", "json")
	require.Equal(t, 0, code, stderr)
	var shown struct {
		Type   string
		Layers [][]model.Step
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &shown))
	assert.Equal(t, "default", shown.Type)

	steps := map[string]model.Step{}
	layer := map[string]int{}
	perNode := map[string][]string{} // node ("master" for the control plane) → its tasks
	for i, l := range shown.Layers {
		for _, s := range l {
			steps[s.ID], layer[s.ID] = s, i
			on := s.ID[len(s.Task)+1:]
			perNode[on] = append(perNode[on], s.Task)
		}
	}
	for _, tasks := range perNode {
		slices.Sort(tasks)
	}
	pre := []string{"cobbler_sync", "copy_keys", "rsync_core_puppet", "sync_manifests", "upload_configuration"}
	deploy := []string{"enable_debug", "firewall", "hosts", "install_packages", "nova_config"}
	controller := []string{"ceph-radosgw", "ceph_conf", "openstack-controller", "sahara"}
	compute := []string{"after_reboot", "ceph_conf", "cobbler_disable_netboot", "erase_node", "move_to_bootstrap", "node_reboot"}
	sorted := func(lists ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(lists...))) }
	assert.Equal(t, map[string][]string{
		"master": sorted([]string{"deploy_end", "deploy_start", "generate_keys", "post_deployment_end",
			"post_deployment_start", "pre_deployment_end", "pre_deployment_start"}),
		"n1": sorted(pre, deploy, controller, []string{"primary-controller"}),
		"n2": sorted(pre, deploy, controller, []string{"controller"}),
		"n3": sorted(pre, deploy, compute, []string{"compute"}),
		"n4": sorted(pre, deploy, compute, []string{"compute"}),
	}, perNode)

	kinds := map[string]string{
		"cobbler_sync@n1": "hook", "rsync_core_puppet@n4": "sync", "sync_manifests@n1": "sync", "copy_keys@n4": "copy_files",
		"upload_configuration@n1": "file", "install_packages@n1": "exec", "ceph-radosgw@n1": "exec",
		"sahara@n1": "skipped", "node_reboot@n4": "reboot", "erase_node@n3": "hook", "move_to_bootstrap@n3": "hook",
		"primary-controller@n1": "group", "deploy_start@master": "stage",
	}
	for id, kind := range kinds {
		assert.Equal(t, kind, steps[id].Kind, id)
	}
	// master_shell: on the control plane, one step per compute.
	for _, n := range []string{"n3", "n4"} {
		s := steps["cobbler_disable_netboot@"+n]
		assert.Empty(t, s.Node, "master_shell runs on the control plane")
		assert.Equal(t, n, s.Spec["env"].(map[string]any)["CAIRN_TASK_NODE"])
		assert.Equal(t, 1, s.Strategy, "parameters.strategy one_by_one")
	}

	// Group strategies: one node at a time on controllers, two on computes.
	assert.Equal(t, 1, steps["primary-controller@n1"].Strategy)
	assert.Equal(t, 1, steps["controller@n2"].Strategy)
	assert.Equal(t, 2, steps["compute@n3"].Strategy)
	assert.Equal(t, 2, steps["compute@n4"].Strategy)
	// The groups run in order; the computes' members side by side.
	assert.Contains(t, steps["install_packages@n2"].Deps, "primary-controller@n1")
	assert.Contains(t, steps["install_packages@n3"].Deps, "controller@n2")
	assert.Contains(t, steps["install_packages@n4"].Deps, "controller@n2")
	assert.Less(t, layer["primary-controller@n1"], layer["install_packages@n2"])
	assert.Less(t, layer["controller@n2"], layer["install_packages@n3"])
	for _, task := range deploy {
		assert.Equal(t, layer[task+"@n3"], layer[task+"@n4"], task)
		assert.Equal(t, "compute", steps[task+"@n3"].Group, task)
	}

	// Lifecycle checks and conditions travel with the steps.
	assert.Equal(t, "test -f packages.done", steps["install_packages@n1"].TestPre.Cmd)
	assert.Equal(t, "test -f packages.done", steps["install_packages@n1"].TestPost.Cmd)
	assert.Contains(t, steps["hosts@n1"].Condition, "changed($.region)")
	assert.Contains(t, steps["enable_debug@n1"].Condition, "settings:common.debug.value == true")
	assert.True(t, steps["sahara@n1"].Skipped)
}
