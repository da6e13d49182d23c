package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// accountsPackage is a group and a user of it on the web nodes, plus
// extra documents.
func accountsPackage(shell, extra string) string {
	return `kind: unix_group
metadata: {name: app}
spec: {gid: 2300}
target: {roles: [web]}
---
kind: user
metadata: {name: app}
spec: {uid: 2300, gid: app, groups: [users], home: /home/app, managehome: true, shell: ` + shell + `, comment: app server}
target: {roles: [web]}
` + extra
}

// TestE2EAccountsOnLocalNode applies a user and its group on a local
// node's account files through the whole server (Temporal, the executor,
// the stack record): apply, re-apply as a no-op, change, an apply that
// fails and is rolled back leaving the accounts as they were, and the
// stack's export applying as a no-op.
func TestE2EAccountsOnLocalNode(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CAIRN_REQUIRE_ALL") == "" {
		t.Skip("the shadow tools need root")
	}
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 5*time.Minute)
	suffix := strings.ToLower(h.token[len(h.token)-8:])
	cl, err := h.client.CreateCluster(ctx, model.ClusterInput{ID: "accounts-" + suffix, Name: "accounts",
		Nodes: []model.Node{{ID: "n1", Roles: []string{"web"}, Mode: model.NodeLocal}}})
	require.NoError(t, err)
	require.NoError(t, h.nodes.Sync(ctx))
	root := h.nodes.NodeRoot(cl.ID, "n1")
	etc := filepath.Join(root, "etc")
	require.NoError(t, os.MkdirAll(etc, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "home"), 0o755))
	for name, data := range map[string]string{
		"passwd": "root:x:0:0:root:/root:/bin/bash\n", "group": "root:x:0:\nusers:x:100:\n",
		"shadow": "root:*:20000:0:99999:7:::\n", "gshadow": "root:*::\nusers:*::\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(etc, name), []byte(data), 0o640))
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(etc, name))
		require.NoError(t, err)
		return string(data)
	}
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "accounts"})
	require.NoError(t, err)
	opts := client.ApplyOptions{Cluster: cl.ID}

	ex := h.applyWait(st.ID, accountsPackage("/bin/bash", ""), opts)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 2})
	assert.Contains(t, read("passwd"), "app:x:2300:2300:app server:/home/app:/bin/bash\n")
	assert.Contains(t, read("group"), "users:x:100:app\n")
	assert.DirExists(t, filepath.Join(root, "home", "app"))

	ex = h.applyWait(st.ID, accountsPackage("/bin/bash", ""), opts)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 2})

	ex = h.applyWait(st.ID, accountsPackage("/bin/sh", ""), opts)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Updated: 1, Unchanged: 1})
	assert.Contains(t, read("passwd"), "app:x:2300:2300:app server:/home/app:/bin/sh\n")
	before := map[string]string{"passwd": read("passwd"), "group": read("group"), "shadow": read("shadow")}

	failing := accountsPackage("/bin/bash", `---
kind: user
metadata: {name: worker}
spec: {uid: 2301, gid: app, managehome: true}
target: {roles: [web]}
---
kind: Exec
metadata: {name: migrate}
spec: {command: "exit 3"}
dependsOn: [user/app, user/worker]
target: {roles: [web]}
`)
	ex = h.applyWait(st.ID, failing, opts)
	mustStatus(t, ex, model.ExecRolledBack)
	require.Empty(t, ex.Report.CompensationFailures, "report %+v", ex.Report)
	for name, want := range before {
		got := read(name)
		if name == "shadow" { // the tools date a change in days: compare names and hashes
			got, want = shadowNames(got), shadowNames(want)
		}
		assert.Equal(t, want, got, "%s after the rollback", name)
	}
	assert.NoDirExists(t, filepath.Join(root, "home", "worker"), "the rolled-back user's home")

	out, err := h.client.Export(ctx, model.ExportRequest{StackID: st.ID}, "yaml")
	require.NoError(t, err)
	assert.Contains(t, string(out), "kind: user")
	ex = h.applyWait(st.ID, string(out), opts)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 2})
}

// shadowNames keeps each shadow line's name and hash.
func shadowNames(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.SplitN(l, ":", 3)
		out = append(out, strings.Join(f[:min(2, len(f))], ":"))
	}
	return strings.Join(out, "\n")
}
