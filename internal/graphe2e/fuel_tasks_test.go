package graphe2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// Fuel's task types on a local node and on an agent node: sync, then
// copy_files from the control plane's files directory, a master_shell per
// node, a reboot (the local node's worker restarts; the agent's reboot
// command stops the agent, which is started again, and the step waits for
// it), and a last step after the reboot.
func TestFuelTaskTypesOnNodes(t *testing.T) {
	files := t.TempDir()
	writeFile(t, filepath.Join(files, "var/lib/fuel/keys/nova/nova.pub"), "ssh-rsa AAAA nova")
	shared := t.TempDir()
	nodes := []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"compute"}},
		{ID: "n4", Name: "n4", Roles: []string{"compute"}, Mode: model.NodeAgent},
	}
	h := newHarness(t, harnessOptions{filesDir: files, drain: time.Second, heartbeat: 10 * time.Second, nodeWait: time.Minute}, nodes...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: rsync_core_puppet
  type: sync
  roles: ["*"]
  parameters: {src: /srv/mirror, dst: /etc/puppet/modules, timeout: 60}
- id: copy_keys
  type: copy_files
  roles: ["*"]
  requires: [rsync_core_puppet]
  cross-depends: {name: rsync_core_puppet, role: "*"}
  parameters:
    files: [{src: /var/lib/fuel/keys/nova/nova.pub, dst: /var/lib/astute/nova/nova.pub}]
    permissions: '0600'
    dir_permissions: '0700'
- id: cobbler_disable_netboot
  type: master_shell
  roles: ["*"]
  requires: [copy_keys]
  parameters: {cmd: 'echo "$CAIRN_TASK_NODE" >> `+filepath.Join(shared, "netboot.log")+`', timeout: 30}
- id: node_reboot
  type: reboot
  roles: ["*"]
  requires: [cobbler_disable_netboot]
  parameters: {timeout: 120}
- id: after_reboot
  type: shell
  roles: ["*"]
  requires: [node_reboot]
  parameters: {cmd: "echo up >> after.log"}
`)
	agentRoot := filepath.Join(t.TempDir(), "n4")
	roots := map[string]string{"n1": h.root("n1"), "n4": agentRoot}
	for _, root := range roots {
		writeFile(t, filepath.Join(root, "srv/mirror/osnailyfacter/init.pp"), "class osnailyfacter {}")
		writeFile(t, filepath.Join(root, "etc/puppet/modules/stale.pp"), "old")
	}
	// The agent's "reboot" stops the agent, as a host going down would.
	agent := h.startAgent("n4", agentRoot, "CAIRN_REBOOT_COMMAND=kill -TERM $PPID", "CAIRN_WORKER_DRAIN=1s")
	exited := make(chan error, 1)
	go func() { exited <- agent.cmd.Wait() }()

	queue := workflows.NodeTaskQueue(h.cluster, "n1")
	require.Equal(t, 1, h.locals.Boots(queue))
	e := h.start(contract.GraphRequest{})
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatal("the agent was not stopped by its node's reboot")
	}
	h.startAgent("n4", agentRoot, "CAIRN_WORKER_DRAIN=1s") // the host is back

	done := h.await(e.ID)
	mustStatus(t, done, model.ExecCompleted)
	for n, root := range roots {
		assert.Equal(t, "class osnailyfacter {}", readFile(t, filepath.Join(root, "etc/puppet/modules/osnailyfacter/init.pp")), n)
		assert.False(t, exists(filepath.Join(root, "etc/puppet/modules/stale.pp")), "%s: the mirror removes what src lacks", n)
		key := filepath.Join(root, "var/lib/astute/nova/nova.pub")
		assert.Equal(t, "ssh-rsa AAAA nova", readFile(t, key), n)
		fi, err := os.Stat(key)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), n)
		fi, err = os.Stat(filepath.Join(root, "var/lib/astute/nova"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), n)
		assert.Equal(t, "up\n", readFile(t, filepath.Join(root, "after.log")), "%s: the step after the reboot ran once", n)
		assert.False(t, exists(filepath.Join(root, "netboot.log")), "%s: master_shell runs on the control plane", n)
	}
	lines := strings.Fields(readFile(t, filepath.Join(shared, "netboot.log")))
	assert.ElementsMatch(t, []string{"n1", "n4"}, lines, "master_shell once per node, told which")
	assert.Equal(t, 2, h.locals.Boots(queue), "the local node's worker restarted once")
	for _, n := range []string{"n1", "n4"} {
		run, err := h.st.LastTaskRun(context.Background(), h.cluster, n, "cobbler_disable_netboot")
		require.NoError(t, err, "master_shell's run is kept in %s's history", n)
		assert.Equal(t, e.ID, run.ExecutionID)
	}
	for _, id := range []string{"node_reboot@n1", "node_reboot@n4"} {
		// Handed back by the stopping worker, it completed on the one that
		// came back (a handover is not counted as an attempt).
		assert.Equal(t, model.StatusSucceeded, stepStatus(done, id), id)
	}
}

// copy_files reads only inside the files directory.
func TestCopyFilesOutsideTheFilesDirIsRefused(t *testing.T) {
	files := t.TempDir()
	h := newHarness(t, harnessOptions{filesDir: files}, model.Node{ID: "n1", Name: "n1", Roles: []string{"compute"}})
	require.NoError(t, os.Symlink("/etc", filepath.Join(files, "etc")))
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: steal
  type: copy_files
  roles: ["*"]
  parameters: {files: [{src: /etc/hostname, dst: /tmp/hostname}]}
`)
	done := h.run(contract.GraphRequest{})
	mustStatus(t, done, model.ExecFailed)
	assert.Contains(t, done.Error, "leads outside CAIRN_FILES_DIR")
	assert.False(t, exists(filepath.Join(h.root("n1"), "tmp/hostname")))
}
