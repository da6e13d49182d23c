package activities_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
)

// serviceDocs: two config files notify a systemd service (nginx's shape:
// a main config and a site), which is to run and start at boot, and the
// service's user and group.
func serviceDocs(conf, site string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: conf}
spec: {path: /etc/web.conf, content: %[1]q}
notify: [Service/web]
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: File
metadata: {name: site}
spec: {path: /etc/site.conf, content: %[2]q}
notify: [Service/web]
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: Service
metadata: {name: web}
spec: {name: cairn-web, ensure: running, enable: true}
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: user
metadata: {name: web}
spec: {gid: web, home: /home/web, managehome: true, shell: /bin/sh, comment: web server}
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: unix_group
metadata: {name: web}
spec: {gid: 2500}
target: {roles: [web]}
`, conf, site)
}

// One apply of a config file notifying a service on a real systemd (a
// user manager), with the service's user and group on the node's account
// files:
// the apply that starts it does not restart it too, a changed config
// restarts it once however many files changed, and an apply that changes
// nothing leaves it alone.
func TestConfigFileNotifiesServiceOnRealSystemd(t *testing.T) {
	sd := testenv.StartUserSystemd(t)
	starts := filepath.Join(sd.Dir, "starts")
	unit := "[Service]\nExecStartPre=/bin/sh -c 'echo started >> " + starts + "'\nExecStart=/bin/sleep 100000\n[Install]\nWantedBy=default.target\n"
	require.NoError(t, os.WriteFile(filepath.Join(sd.UnitDir, "cairn-web.service"), []byte(unit), 0o644))
	st := openStore(t)
	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	reg.Register(providers.NewService(sd.Address))
	// The node is a directory standing in for the host: its files and
	// account files (for the shadow tools' --root) live in it.
	root := t.TempDir()
	accounts := map[string]string{
		"passwd": "root:x:0:0:root:/root:/bin/bash\n", "group": "root:x:0:\nusers:x:100:\n",
		"shadow": "root:*:20000:0:99999:7:::\n", "gshadow": "root:*::\nusers:*::\n",
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "home"), 0o755))
	for name, data := range accounts {
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", name), []byte(data), 0o640))
	}
	node := providers.Node{Name: "web-1", Root: root}
	f := &fixture{t: t, st: st, acts: activities.New(activities.Deps{Store: st, Registry: reg, Packages: prepare.GraphsLoader{}, Cluster: "c1", Node: node}), root: root}
	require.NoError(t, st.PutCluster(context.Background(), &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
		{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent},
	}}))
	startCount := func() int {
		data, err := os.ReadFile(starts)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return strings.Count(string(data), "started\n")
	}
	stack := f.stack("")
	apply := func(execID, conf, site string) map[string]contract.StepResult {
		t.Helper()
		plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: stack.ID, ClusterID: "c1", SnapshotHash: f.snapshot(serviceDocs(conf, site))})
		require.Len(t, plan.Units, 1)
		res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: plan.Units[0]})
		require.NoError(t, err)
		out := map[string]contract.StepResult{}
		for id, r := range outcomes(res) {
			out[strings.TrimSuffix(id, "@web-1")] = r
		}
		return out
	}

	got := apply("exec-svc-1", "v1", "s1")
	assert.Equal(t, model.OutcomeUpdated, got["service/web"].Outcome, got["service/web"].Error)
	assert.False(t, got["service/web"].Refreshed, "the start is its refresh")
	assert.Equal(t, 1, startCount(), "started once")
	_, err := os.Lstat(filepath.Join(sd.UnitDir, "default.target.wants", "cairn-web.service"))
	assert.NoError(t, err, "enabled")
	assert.Equal(t, model.OutcomeCreated, got["unix_group/web"].Outcome, got["unix_group/web"].Error)
	assert.Equal(t, model.OutcomeCreated, got["user/web"].Outcome, got["user/web"].Error)
	passwd, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	require.NoError(t, err)
	assert.Contains(t, string(passwd), ":2500:web server:/home/web:/bin/sh\n", "the user, in its group")
	fi, err := os.Stat(filepath.Join(root, "home", "web"))
	require.NoError(t, err)
	assert.True(t, fi.IsDir(), "its home")

	got = apply("exec-svc-2", "v2", "s2")
	assert.Equal(t, model.OutcomeUpdated, got["file/conf"].Outcome)
	assert.Equal(t, model.OutcomeUpdated, got["file/site"].Outcome)
	assert.True(t, got["service/web"].Refreshed, got["service/web"].Error)
	assert.Equal(t, 2, startCount(), "two changed files restart it once")

	got = apply("exec-svc-3", "v2", "s2")
	assert.Equal(t, model.OutcomeUnchanged, got["service/web"].Outcome)
	assert.False(t, got["service/web"].Refreshed)
	assert.Equal(t, 2, startCount(), "nothing changed: no restart")
	assert.Equal(t, model.OutcomeUnchanged, got["user/web"].Outcome)
	assert.Equal(t, model.OutcomeUnchanged, got["unix_group/web"].Outcome)
}
