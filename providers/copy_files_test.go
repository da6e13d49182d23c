package providers

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestCopyFilesModesAndCompensation(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	node := Node{Name: "n1", Root: root}
	writeTree(t, filepath.Join(root, "etc/hiera"), map[string]string{"old_admin_user.yaml": "previous"}, 0o644)
	before := testenv.Tree(t, root)
	reg := fuelRegistry(nil)
	req := Request{Kind: "copy_files", Name: "copy_keys", Node: node, Spec: model.Spec{
		"files": []any{
			map[string]any{"src": "/var/lib/fuel/keys/nova/nova", "dst": "/var/lib/astute/nova/nova", "contentBase64": b64("PRIVATE")},
			map[string]any{"src": "/var/lib/fuel/keys/nova/nova.pub", "dst": "/var/lib/astute/nova/nova.pub", "contentBase64": b64("PUBLIC")},
			map[string]any{"src": "/etc/fuel/old_admin_user.yaml", "dst": "/etc/hiera/old_admin_user.yaml", "contentBase64": b64("admin: x")},
		},
		"permissions": "0600", "dir_permissions": "0700",
	}}

	plan, err := reg.Converge(ctx, Request{Kind: req.Kind, Name: req.Name, Node: node, Spec: req.Spec, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionUpdate, plan.Action)
	assert.Equal(t, before, testenv.Tree(t, root), "a dry-run writes nothing")

	ch, err := reg.Converge(ctx, req)
	require.NoError(t, err)
	assert.False(t, ch.Irreversible)
	for dst, want := range map[string]string{"var/lib/astute/nova/nova": "PRIVATE", "var/lib/astute/nova/nova.pub": "PUBLIC", "etc/hiera/old_admin_user.yaml": "admin: x"} {
		b, err := os.ReadFile(filepath.Join(root, dst))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), dst)
		fi, err := os.Stat(filepath.Join(root, dst))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), dst)
	}
	for _, dir := range []string{"var", "var/lib", "var/lib/astute", "var/lib/astute/nova"} {
		fi, err := os.Stat(filepath.Join(root, dir))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), dir)
	}
	fi, err := os.Stat(filepath.Join(root, "etc/hiera"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "existing directories keep their mode")
	assert.NotContains(t, ch.After.Outputs, "content", "no bytes in outputs")

	again, err := reg.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action)

	require.NoError(t, reg.Compensate(ctx, req, ch))
	assert.Equal(t, before, testenv.Tree(t, root), "previous bytes and mode back, new files and directories removed")
}

func TestCopyFilesRefusesUnreadSources(t *testing.T) {
	_, err := fuelRegistry(nil).Converge(context.Background(), Request{Kind: "copy_files", Name: "c", Node: Node{Name: "n", Root: t.TempDir()},
		Spec: model.Spec{"files": []any{map[string]any{"src": "/etc/shadow", "dst": "/x"}}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was not read on the control plane")
	assert.True(t, IsConfigError(err))
}

func TestCopyFilesRefusesEscapes(t *testing.T) {
	_, err := fuelRegistry(nil).Converge(context.Background(), Request{Kind: "copy_files", Name: "c", Node: Node{Name: "n", Root: t.TempDir()},
		Spec: model.Spec{"files": []any{map[string]any{"src": "/a", "dst": "/../../etc/x", "contentBase64": b64("x")}}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "escapes")
}

func TestUploadFileDirPermissions(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ch, err := fuelRegistry(nil).Converge(ctx, Request{Kind: "file", Name: "upload_provision_info", Node: Node{Name: "n", Root: root},
		Spec: model.Spec{"path": "/etc/fuel/cluster/1/provision.yaml", "content": "x: 1", "mode": "0640", "dirMode": "0750"}})
	require.NoError(t, err)
	assert.Equal(t, model.ActionCreate, ch.Action)
	fi, err := os.Stat(filepath.Join(root, "etc/fuel/cluster/1"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(root, "etc/fuel/cluster/1/provision.yaml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
