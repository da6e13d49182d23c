package graphe2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// fuelShapedGraph is a complete deployment graph as Fuel users write it.
const fuelShapedGraph = "testdata/fuel_shaped/tasks.yaml"

// fuelShapedNodes: a primary controller, a controller and two computes,
// one of them a real agent.
func fuelShapedNodes() []model.Node {
	return []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"primary-controller"}},
		{ID: "n2", Name: "n2", Roles: []string{"controller"}},
		{ID: "n3", Name: "n3", Roles: []string{"compute"}},
		{ID: "n4", Name: "n4", Roles: []string{"compute"}, Mode: model.NodeAgent},
	}
}

// fuelSettings are the cluster's editable attributes, Fuel's {value: x}
// leaves included.
func fuelSettings(master string, rsyncPort int, cpuRatio string) map[string]any {
	value := func(v any) map[string]any { return map[string]any{"value": v} }
	return map[string]any{
		"master_ip": "127.0.0.1",
		"common":    map[string]any{"debug": value(true), "decommission": value(false)},
		"storage":   map[string]any{"objects_ceph": value(false)},
		"region":    map[string]any{"name": value("RegionOne")},
		"nova":      map[string]any{"cpu_allocation_ratio": value(cpuRatio)},
		"master":    map[string]any{"workdir": value(master), "rsync_port": value(rsyncPort)},
	}
}

// The Fuel-shaped graph of testdata runs on a primary controller, a
// controller and two computes (one a real agent) with the outcomes Fuel
// gives: pre-deployment hooks, mirrors, keys and configuration everywhere,
// test_pre skipping what is done, conditions false skipping their tasks,
// master_shell once per compute on the control plane, a reboot of each
// compute; then a re-deployment with --event deploy_changes re-runs only
// the tasks whose reexecute_on names it, and of those, the ones whose
// changed() conditions hold.
func TestFuelShapedGraph(t *testing.T) {
	files, master, served := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(served, "2015.1.0-8.0/modules/osnailyfacter/init.pp"), "class osnailyfacter {}")
	rsyncPort := testenv.Rsyncd(t, served)
	hooksLog := filepath.Join(master, "hooks.log")
	hook := `printf '%s %s %s\n' "$CAIRN_HOOK" "$CAIRN_TASK_NODE" "$(cat)" >> ` + hooksLog
	h := newHarness(t, harnessOptions{
		filesDir: files, drain: time.Second, heartbeat: 10 * time.Second, nodeWait: time.Minute,
		hooks: map[string]string{"cobbler_sync": hook, "move_to_bootstrap": hook, "erase_node": hook},
	}, fuelShapedNodes()...)
	ctx := context.Background()
	src, err := os.ReadFile(fuelShapedGraph)
	require.NoError(t, err)
	h.putGraph(model.LayerRelease, "rel", "default", string(src))
	require.NoError(t, h.st.PutRelease(ctx, &model.Release{ID: "rel", Name: "release", Version: "2015.1.0-8.0"}))
	setSettings := func(cpuRatio string) {
		t.Helper()
		_, err := h.st.UpdateClusterSettings(ctx, h.cluster, func(map[string]any) (map[string]any, error) {
			return fuelSettings(master, rsyncPort, cpuRatio), nil
		})
		require.NoError(t, err)
	}
	setSettings("8.0")

	writeFile(t, filepath.Join(files, "var/lib/fuel/keys", h.cluster, "nova/nova.pub"), "ssh-rsa AAAA nova")
	agentRoot := filepath.Join(t.TempDir(), "n4")
	roots := map[string]string{"n1": h.root("n1"), "n2": h.root("n2"), "n3": h.root("n3"), "n4": agentRoot}
	for _, root := range roots {
		writeFile(t, filepath.Join(root, "etc/puppet/modules/stale.pp"), "old")
		writeFile(t, filepath.Join(root, "srv/mirror/2015.1.0-8.0/manifests/site.pp"), "node default {}")
		writeFile(t, filepath.Join(root, "etc/puppet/manifests/stale.pp"), "old")
	}
	// n2 has its packages already: install_packages' test_pre says done.
	writeFile(t, filepath.Join(roots["n2"], "packages.done"), "by hand\n")

	// The agent's reboot stops it, as a host going down would; it is
	// started again once stopped.
	agent := h.startAgent("n4", agentRoot, "CAIRN_REBOOT_COMMAND=kill -TERM $PPID", "CAIRN_WORKER_DRAIN=1s")
	exited := make(chan error, 1)
	go func() { exited <- agent.cmd.Wait() }()
	queue := workflows.NodeTaskQueue(h.cluster, "n3")
	require.Equal(t, 1, h.locals.Boots(queue))

	e := h.start(contract.GraphRequest{})
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatal("the agent was not stopped by its node's reboot")
	}
	h.startAgent("n4", agentRoot, "CAIRN_WORKER_DRAIN=1s")
	first := h.await(e.ID)
	mustStatus(t, first, model.ExecCompleted)

	lines := func(path string) []string { return strings.Fields(readFile(t, path)) }
	mode := func(path string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}
	computes, controllers := []string{"n3", "n4"}, []string{"n1", "n2"}

	// Pre-deployment, on every node: the mirrors (from the master's rsync
	// daemon and from a directory of the node, named with placeholders),
	// the keys with their modes, the configuration with every placeholder
	// resolved.
	for n, root := range roots {
		assert.Equal(t, "class osnailyfacter {}", readFile(t, filepath.Join(root, "etc/puppet/modules/osnailyfacter/init.pp")), n)
		assert.False(t, exists(filepath.Join(root, "etc/puppet/modules/stale.pp")), "%s: the mirror removes what src lacks", n)
		assert.Equal(t, "node default {}", readFile(t, filepath.Join(root, "etc/puppet/manifests/site.pp")), n)
		assert.False(t, exists(filepath.Join(root, "etc/puppet/manifests/stale.pp")), n)
		key := filepath.Join(root, "var/lib/astute/nova/nova.pub")
		assert.Equal(t, "ssh-rsa AAAA nova", readFile(t, key), n)
		assert.Equal(t, os.FileMode(0o600), mode(key), n)
		assert.Equal(t, os.FileMode(0o700), mode(filepath.Dir(key)), n)
		conf := filepath.Join(root, "etc/fuel/cluster", h.cluster, "astute.yaml")
		assert.Equal(t, "master_ip: 127.0.0.1\nregion: RegionOne\nrelease: 2015.1.0-8.0\n", readFile(t, conf), n)
		assert.Equal(t, os.FileMode(0o640), mode(conf), n)
		assert.Equal(t, os.FileMode(0o750), mode(filepath.Dir(conf)), n)
		assert.False(t, exists(filepath.Join(root, "netboot.log")), "%s: master_shell runs on the control plane", n)
	}
	assert.Equal(t, "generated "+h.cluster+"\n", readFile(t, filepath.Join(master, "keys.log")))
	hookRuns := readFile(t, hooksLog)
	assert.Equal(t, 4, strings.Count(hookRuns, "\n"), "cobbler_sync once per node; move_to_bootstrap and erase_node not at all: %s", hookRuns)
	for n := range roots {
		assert.Contains(t, hookRuns, "cobbler_sync "+n+` {"provisioning_info":{"engine":"cobbler"}}`+"\n")
	}

	// Deployment: test_pre, conditions both ways, per node.
	for n, root := range roots {
		install := 1
		if n == "n2" {
			install = 0
			assert.Equal(t, "by hand\n", readFile(t, filepath.Join(root, "packages.done")), "test_pre exited 0: already done")
		}
		assert.Len(t, lines(filepath.Join(root, "install_packages.log")), install, n)
		assert.Len(t, lines(filepath.Join(root, "firewall.log")), 1, n)
		assert.Equal(t, []string{"x"}, lines(filepath.Join(root, "hosts.log")), "%s: changed() holds on a first run", n)
		assert.Equal(t, []string{"8.0"}, lines(filepath.Join(root, "nova_config.log")), "%s: the yaql command", n)
		assert.Equal(t, "debug true\n", readFile(t, filepath.Join(root, "debug.log")), "%s: the legacy condition holds", n)
		assert.False(t, exists(filepath.Join(root, "etc/ceph/ceph.conf")), "%s: the legacy condition is false", n)
		assert.False(t, exists(filepath.Join(root, "sahara.log")), "%s: a skipped task", n)
	}
	// The groups ran in order: primary-controller, controller, compute.
	ranAt := func(n string) int64 {
		t.Helper()
		at, err := strconv.ParseInt(lines(filepath.Join(roots[n], "firewall.log"))[0], 10, 64)
		require.NoError(t, err)
		return at
	}
	assert.Less(t, ranAt("n1"), ranAt("n2"))
	assert.Less(t, ranAt("n2"), min(ranAt("n3"), ranAt("n4")))
	for _, n := range controllers {
		assert.Equal(t, "RegionOne\n", readFile(t, filepath.Join(roots[n], "controller.log")), n)
		assert.Equal(t, model.StatusSkipped, stepStatus(first, "ceph-radosgw@"+n), "the yaql condition is false")
	}
	for _, n := range computes {
		assert.False(t, exists(filepath.Join(roots[n], "controller.log")), n)
		assert.Equal(t, model.StatusSkipped, stepStatus(first, "erase_node@"+n))
		assert.Equal(t, model.StatusSkipped, stepStatus(first, "move_to_bootstrap@"+n))
		assert.Equal(t, model.StatusSucceeded, stepStatus(first, "node_reboot@"+n))
		assert.Equal(t, "up\n", readFile(t, filepath.Join(roots[n], "after_reboot.log")), "%s: the step after the reboot ran once", n)
	}
	assert.ElementsMatch(t, computes, lines(filepath.Join(master, "netboot.log")), "master_shell once per compute")
	assert.Equal(t, 2, h.locals.Boots(queue), "n3's worker restarted once")

	// Re-deployment: nova's settings changed, the region did not.
	setSettings("4.0")
	second := h.run(contract.GraphRequest{Events: []string{"deploy_changes"}})
	mustStatus(t, second, model.ExecCompleted)
	for n, root := range roots {
		install := 1
		if n == "n2" {
			install = 0
		}
		assert.Len(t, lines(filepath.Join(root, "install_packages.log")), install, "%s: install_packages has no reexecute_on", n)
		assert.Len(t, lines(filepath.Join(root, "firewall.log")), 2, "%s: reexecute_on: [deploy_changes]", n)
		assert.Equal(t, []string{"x"}, lines(filepath.Join(root, "hosts.log")), "%s: changed($.region) is false", n)
		assert.Equal(t, model.StatusSkipped, stepStatus(second, "hosts@"+n))
		assert.Equal(t, []string{"8.0", "4.0"}, lines(filepath.Join(root, "nova_config.log")), "%s: changedAny($.nova, …) holds", n)
	}
	for _, n := range computes {
		assert.Equal(t, "up\n", readFile(t, filepath.Join(roots[n], "after_reboot.log")), "%s: no second reboot", n)
	}
	assert.Equal(t, 2, h.locals.Boots(queue), "n3 not rebooted again")
	assert.ElementsMatch(t, computes, lines(filepath.Join(master, "netboot.log")), "master_shell not run again")
	assert.Equal(t, hookRuns, readFile(t, hooksLog), "cobbler_sync not run again")
}

// A test_post that fails fails its task where it ran, and its dependents.
func TestFuelShapedTestPostFails(t *testing.T) {
	h := newHarness(t, harnessOptions{}, fuelShapedNodes()[:3]...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: configure_nova
  type: shell
  role: [compute, controller]
  test_post: {cmd: "grep -q compute_driver nova.conf || { echo no compute_driver >&2; exit 2; }"}
  parameters: {cmd: "echo '[DEFAULT]' > nova.conf; test $CAIRN_NODE = n3 || echo compute_driver=libvirt >> nova.conf"}
- id: start_nova
  type: shell
  role: [compute, controller]
  requires: [configure_nova]
  parameters: {cmd: "echo started > nova.log"}
`)
	e := h.run(contract.GraphRequest{})
	mustStatus(t, e, model.ExecFailed)
	assert.Equal(t, model.StatusSucceeded, stepStatus(e, "configure_nova@n2"))
	assert.Equal(t, model.StatusFailed, stepStatus(e, "configure_nova@n3"))
	assert.Equal(t, model.StatusDepFailed, stepStatus(e, "start_nova@n3"))
	assert.Equal(t, "[DEFAULT]\n", readFile(t, filepath.Join(h.root("n3"), "nova.conf")), "the task ran before its test_post failed")
	require.Len(t, e.Report.Failures, 1)
	assert.Contains(t, e.Report.Failures[0].Error, "test_post exited 2")
	assert.Contains(t, e.Report.Failures[0].Error, "no compute_driver")
}
