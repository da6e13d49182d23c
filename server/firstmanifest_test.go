package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// accountsRoot makes root hold a small copy of a host's account files,
// for the shadow tools to work on with --root (they need root).
func accountsRoot(t *testing.T, root string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatal("the user kind runs the shadow tools, which need root (CAIRN_REQUIRE_ALL is set)")
		}
		t.Skip("the shadow tools need root")
	}
	files := map[string]string{
		"passwd":  "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":   "root:x:0:\nusers:x:100:\nnogroup:x:65534:\n",
		"shadow":  "root:*:20000:0:99999:7:::\nnobody:*:20000:0:99999:7:::\n",
		"gshadow": "root:*::\nusers:*::\nnogroup:*::\n",
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "home"), 0o755))
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.Contains(name, "shadow") {
			mode = 0o640
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", name), []byte(data), mode))
	}
}

// Puppet's first manifest through `cairn server`: a package, a user, a
// config file and a service the file notifies, applied in one apply
// over the API on the real systems (a local apt repository into the
// machine's dpkg database, the shadow tools on the control plane's
// account files, a systemd --user manager named by
// CAIRN_SYSTEMD_ADDRESS). The apply that starts the service does not
// restart it too; a re-apply changes nothing; a change of the config
// files restarts it exactly once; the destroy removes the package, the
// user and the files, and leaves the service as it is (the kind creates
// no service, so it deletes none).
func TestFirstManifestThroughTheServer(t *testing.T) {
	root := t.TempDir()
	accountsRoot(t, root)
	sd := testenv.StartUserSystemd(t)
	starts := filepath.Join(sd.Dir, "starts")
	unit := "[Unit]\nDescription=cairn web\n[Service]\nExecStartPre=/bin/sh -c 'echo started >> " + starts + "'\nExecStart=/bin/sleep 100000\n[Install]\nWantedBy=default.target\n"
	require.NoError(t, os.WriteFile(filepath.Join(sd.UnitDir, "cairn-web.service"), []byte(unit), 0o644))
	repo := testenv.NewAptRepo(t)
	pkgName := testenv.PackageName(t, "web")
	repo.Add(t, pkgName, "1.0-1")
	t.Setenv("APT_CONFIG", repo.Config)
	t.Setenv("PATH", filepath.Dir(repo.AptGet)+string(os.PathListSeparator)+os.Getenv("PATH"))

	dev := testenv.Temporal(t)
	addr := loopbackAddr(t)
	runServerAt(t, dev.HostPort, t.TempDir(), addr, map[string]string{
		"CAIRN_SYSTEMD_ADDRESS": sd.Address, "CAIRN_CONTROL_ROOT": root,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := client.New("http://"+addr, "t0ken")
	require.NoError(t, err)
	conn := systemdAt(t, sd.Address)
	startCount := func() int {
		b, err := os.ReadFile(starts)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return strings.Count(string(b), "started\n")
	}
	manifest := func(port int) string {
		return fmt.Sprintf(`kind: package
metadata: {name: web}
spec: {name: %[1]s, ensure: present}
---
kind: user
metadata: {name: web}
spec: {name: cairnweb, uid: 2001, gid: users, home: /home/cairnweb, shell: /bin/sh, managehome: true}
---
kind: File
metadata: {name: web-conf}
spec: {path: /etc/web.conf, content: "port %[2]d\n", mode: "0644"}
dependsOn: [package/web]
notify: [service/web]
---
kind: File
metadata: {name: web-env}
spec: {path: /etc/web.env, content: "PORT=%[2]d\n", mode: "0644"}
notify: [service/web]
---
kind: service
metadata: {name: web}
spec: {name: cairn-web, ensure: running, enable: true}
dependsOn: [package/web, user/web]
`, pkgName, port)
	}
	st, err := c.CreateStack(ctx, model.StackInput{Name: "first-manifest"})
	require.NoError(t, err)
	apply := func(doc string) *model.Execution {
		t.Helper()
		ex, err := c.Apply(ctx, st.ID, &client.Document{Data: []byte(doc), Format: "yaml"}, client.ApplyOptions{Wait: true})
		require.NoError(t, err)
		require.Equal(t, model.ExecCompleted, ex.Status, "apply: %s", ex.Error)
		return ex
	}
	passwd := func() string {
		b, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
		require.NoError(t, err)
		return string(b)
	}

	ex := apply(manifest(80))
	assert.Equal(t, 5, ex.Report.Created+ex.Report.Updated, "%+v", ex.Report)
	assert.Equal(t, "1.0-1", testenv.Installed(t, pkgName))
	assert.Contains(t, passwd(), "cairnweb:x:2001:100::/home/cairnweb:/bin/sh\n")
	assert.DirExists(t, filepath.Join(root, "home", "cairnweb"))
	conf, err := os.ReadFile(filepath.Join(root, "etc", "web.conf"))
	require.NoError(t, err)
	assert.Equal(t, "port 80\n", string(conf))
	assert.Equal(t, "active", activeState(t, conn, "cairn-web.service"))
	assert.FileExists(t, filepath.Join(sd.UnitDir, "default.target.wants", "cairn-web.service"), "enabled")
	assert.Equal(t, 1, startCount(), "the apply that starts the service does not restart it too")

	ex = apply(manifest(80))
	assert.Equal(t, model.Report{Unchanged: 5}, model.Report{Unchanged: ex.Report.Unchanged, Created: ex.Report.Created,
		Updated: ex.Report.Updated, Deleted: ex.Report.Deleted}, "a re-apply changes nothing")
	assert.Equal(t, 1, startCount(), "a re-apply restarts nothing")

	ex = apply(manifest(8080))
	assert.Equal(t, 3, ex.Report.Updated, "the two files and the service's restart: %+v", ex.Report)
	assert.Equal(t, 1, ex.Report.Refreshed, "%+v", ex.Report)
	assert.Equal(t, 2, startCount(), "two changed files notifying the service restart it exactly once")
	conf, err = os.ReadFile(filepath.Join(root, "etc", "web.conf"))
	require.NoError(t, err)
	assert.Equal(t, "port 8080\n", string(conf))

	del, err := c.DeleteStack(ctx, st.ID, client.DeleteOptions{Wait: true})
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, del.Status, "destroy: %s", del.Error)
	assert.Empty(t, testenv.Installed(t, pkgName), "the package the stack installed is removed")
	assert.NotContains(t, passwd(), "cairnweb", "the user the stack created is deleted")
	assert.NoFileExists(t, filepath.Join(root, "etc", "web.conf"))
	assert.NoFileExists(t, filepath.Join(root, "etc", "web.env"))
	assert.Equal(t, "active", activeState(t, conn, "cairn-web.service"), "a service leaving its stack is left as it is")
	assert.Equal(t, 2, startCount())
}
