package api

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// TestE2EHostKinds applies a config file, a line in it and two packages
// of a local apt repository over HTTP: the unit's packages in one apt-get
// transaction; a re-apply changes nothing; a failed upgrade is rolled
// back (the old version installed again, the file's bytes restored); the
// packages are exported from dpkg and the export applies as a no-op.
func TestE2EHostKinds(t *testing.T) {
	repo := testenv.NewAptRepo(t)
	a, b := testenv.PackageName(t, "a"), testenv.PackageName(t, "b")
	repo.Add(t, a, "1.0-1")
	repo.Add(t, b, "1.0-1")
	// The worker's apt reads the test's repository only, through the
	// logging apt-get.
	t.Setenv("APT_CONFIG", repo.Config)
	t.Setenv("PATH", filepath.Dir(repo.AptGet)+string(os.PathListSeparator)+os.Getenv("PATH"))

	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 5*time.Minute)
	root := t.TempDir()
	conf := filepath.Join(root, "sshd_config")
	// The file resource manages the mode; its lines are file_line's.
	require.NoError(t, os.WriteFile(conf, []byte("Port 22\nPermitRootLogin yes\n"), 0o644))
	docs := func(ensureA, extra string) string {
		return fmt.Sprintf(`kind: File
metadata: {name: sshd}
spec: {path: %[1]s, mode: "0600"}
---
kind: file_line
metadata: {name: root-login}
spec: {path: %[1]s, line: PermitRootLogin no, match: "^PermitRootLogin "}
---
kind: package
metadata: {name: a}
spec: {name: %[2]s, ensure: %[3]s}
---
kind: package
metadata: {name: b}
spec: {name: %[4]s}
%[5]s`, conf, a, ensureA, b, extra)
	}
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "host"})
	require.NoError(t, err)

	ex := h.applyWait(st.ID, docs("present", ""), client.ApplyOptions{})
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 3, Updated: 1})
	assert.Equal(t, "1.0-1", testenv.Installed(t, a))
	assert.Equal(t, "1.0-1", testenv.Installed(t, b))
	assert.Equal(t, 1, repo.Installs(t), "the unit's packages in one apt-get transaction")
	got, err := os.ReadFile(conf)
	require.NoError(t, err)
	assert.Equal(t, "Port 22\nPermitRootLogin no\n", string(got))

	ex = h.applyWait(st.ID, docs("present", ""), client.ApplyOptions{})
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 4})
	assert.Equal(t, 1, repo.Installs(t), "a re-apply runs no apt-get install")

	// An upgrade to latest that a later step fails is rolled back.
	repo.Add(t, a, "2.0-1")
	failing := docs("latest", `---
kind: file_line
metadata: {name: banner}
spec: {path: `+conf+`, line: Banner /etc/issue}
---
kind: Exec
metadata: {name: check}
spec: {command: "test \"$(cat /usr/share/`+a+`/version)\" = 2.0-1 && exit 3"}
dependsOn: [package/a, file_line/banner]
`)
	ex = h.applyWait(st.ID, failing, client.ApplyOptions{})
	mustStatus(t, ex, model.ExecRolledBack)
	require.Empty(t, ex.Report.CompensationFailures, "report %+v", ex.Report)
	assert.Equal(t, "1.0-1", testenv.Installed(t, a), "rollback installs the replaced version again")
	got, err = os.ReadFile(conf)
	require.NoError(t, err)
	assert.Equal(t, "Port 22\nPermitRootLogin no\n", string(got), "rollback restores the file's bytes")

	// Export from dpkg, by name; applied to a new stack it changes nothing.
	data, err := h.client.Export(ctx, model.ExportRequest{Kinds: []string{"package"}, Selector: &model.ExportSelector{Names: []string{a, b}}}, "yaml")
	require.NoError(t, err)
	require.Contains(t, string(data), "ensure: 1.0-1")
	other, err := h.client.CreateStack(ctx, model.StackInput{Name: "exported"})
	require.NoError(t, err)
	ex, err = h.client.Apply(ctx, other.ID, &client.Document{Data: data, Format: "yaml"}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 2})

	// A package that leaves its stack is removed.
	ex = h.applyWait(other.ID, fmt.Sprintf("kind: package\nmetadata: {name: %[1]s}\nspec: {name: %[1]s, ensure: 1.0-1}\n", a), client.ApplyOptions{})
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 1, Deleted: 1})
	assert.Empty(t, testenv.Installed(t, b))
	assert.Equal(t, "1.0-1", testenv.Installed(t, a))
}
