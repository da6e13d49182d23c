package providers

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestFileInterruptedApplyConverges(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	mustWrite(t, victim, []byte("untouched"), 0o644)
	tests := []struct {
		name  string
		stale func(t *testing.T, tmp string)
	}{
		{"half-written temporary file", func(t *testing.T, tmp string) { mustWrite(t, tmp, []byte("half-wri"), 0o600) }},
		{"temporary file made read-only", func(t *testing.T, tmp string) { mustWrite(t, tmp, []byte("x"), 0o400) }},
		// A planted symlink must be replaced, not written through.
		{"temporary name is a symlink out of the root", func(t *testing.T, tmp string) { mustSymlink(t, victim, tmp) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			target := filepath.Join(node.Root, "motd")
			mustWrite(t, target, []byte("old"), 0o644)
			tt.stale(t, tempPath(target))
			req := Request{Kind: "file", Name: "motd", Node: node, Spec: model.Spec{"path": "/motd", "content": "new"}}
			ch, err := r.Converge(ctx, req)
			require.NoError(t, err, "converge: %v %+v", err, ch)
			require.Equal(t, model.OutcomeUpdated, ch.Outcome, "converge: %v %+v", err, ch)
			got, _ := os.ReadFile(target)
			assert.Equal(t, "new", string(got), "target holds %q", got)
			_, err = os.Lstat(tempPath(target))
			assert.ErrorIs(t, err, fs.ErrNotExist, "temporary file left behind: %v", err)
			got, _ = os.ReadFile(victim)
			assert.Equal(t, "untouched", string(got), "write followed the planted symlink: victim holds %q", got)
			second, err := r.Converge(ctx, req)
			require.NoError(t, err, "second converge")
			assert.Equal(t, model.ActionNoop, second.Action, "second converge: %+v", second)
		})
	}
}

func TestFileWriteReplacesAtomically(t *testing.T) {
	// The bytes are renamed into place: a hard link to the old file keeps
	// the old bytes, as a reader holding the old file would.
	r := localRegistry(t)
	node := localNode(t)
	target := filepath.Join(node.Root, "motd")
	mustWrite(t, target, []byte("old"), 0o644)
	require.NoError(t, os.Link(target, filepath.Join(node.Root, "old-link")))
	_, err := r.Converge(context.Background(), Request{Kind: "file", Name: "motd", Node: node, Spec: model.Spec{"path": "motd", "content": "new"}})
	require.NoError(t, err)
	got, _ := os.ReadFile(filepath.Join(node.Root, "old-link"))
	assert.Equal(t, "old", string(got), "old inode was rewritten in place: %q", got)
	got, _ = os.ReadFile(target)
	assert.Equal(t, "new", string(got), "target holds %q", got)
}

func TestFileRefusals(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	mustWrite(t, secret, []byte("outside"), 0o644)
	tests := []struct {
		name      string
		setup     func(t *testing.T, root string)
		spec      model.Spec
		configErr bool
		wantMsg   string
	}{
		{name: "parent directory missing", spec: model.Spec{"path": "/etc/app/app.conf", "content": "x"},
			wantMsg: "parent directory of /etc/app/app.conf does not exist: declare a directory resource for /etc/app"},
		{name: "path is a directory", setup: func(t *testing.T, root string) { mustMkdir(t, filepath.Join(root, "etc")) },
			spec: model.Spec{"path": "/etc", "content": "x"}, wantMsg: "/etc is a directory"},
		{name: "dot-dot escape", spec: model.Spec{"path": "../outside", "content": "x"}, configErr: true, wantMsg: "escapes the root"},
		{name: "symlinked parent leads out", setup: func(t *testing.T, root string) { mustSymlink(t, outside, filepath.Join(root, "out")) },
			spec: model.Spec{"path": "/out/secret", "content": "pwned"}, configErr: true, wantMsg: "through symlink /out"},
		{name: "leaf symlink leads out", setup: func(t *testing.T, root string) { mustSymlink(t, secret, filepath.Join(root, "secret")) },
			spec: model.Spec{"path": "/secret", "content": "pwned"}, configErr: true, wantMsg: "leaves the root"},
		{name: "delete through a symlinked parent", setup: func(t *testing.T, root string) { mustSymlink(t, outside, filepath.Join(root, "out")) },
			spec: model.Spec{"path": "/out/secret", "ensure": "absent"}, configErr: true, wantMsg: "leaves the root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			if tt.setup != nil {
				tt.setup(t, node.Root)
			}
			before := snapshot(t, node.Root)
			ch, err := r.Converge(ctx, Request{Kind: "file", Name: "f", Node: node, Spec: tt.spec})
			require.Error(t, err, "converge succeeded: %+v", ch)
			require.Equal(t, model.OutcomeFailed, ch.Outcome, "converge succeeded: %+v", ch)
			assert.Equal(t, tt.configErr, IsConfigError(err), "IsConfigError = %v, want %v (%v)", IsConfigError(err), tt.configErr, err)
			assert.Contains(t, err.Error(), tt.wantMsg, "error %q does not say %q", err, tt.wantMsg)
			got := snapshot(t, node.Root)
			assert.Len(t, got, len(before), "refused apply changed the root")
			outside, _ := os.ReadFile(secret)
			assert.Equal(t, "outside", string(outside), "file outside the root changed")
		})
	}
}

func TestFileAbsolutePathStaysInRoot(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	const p = "/cairn-provider-test-must-not-exist"
	ch, err := r.Converge(context.Background(), Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": p, "content": "x"}})
	require.NoError(t, err)
	_, err = os.Stat(p)
	assert.ErrorIs(t, err, fs.ErrNotExist, "wrote the worker's %s", p)
	got, _ := os.ReadFile(filepath.Join(node.Root, p))
	assert.Equal(t, "x", string(got), "file not in the node root")
	assert.Equal(t, p, ch.After.ID, "id %q, want the node path %q", ch.After.ID, p)
}

func TestFileThroughSymlinkInsideRoot(t *testing.T) {
	// A leaf symlink that stays inside the root is written through; the
	// link itself is kept.
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	mustMkdir(t, filepath.Join(node.Root, "real"))
	mustWrite(t, filepath.Join(node.Root, "real", "motd"), []byte("old"), 0o644)
	mustSymlink(t, "real/motd", filepath.Join(node.Root, "motd"))
	req := Request{Kind: "file", Name: "motd", Node: node, Spec: model.Spec{"path": "/motd", "content": "new"}}
	_, err := r.Converge(ctx, req)
	require.NoError(t, err)
	got, _ := os.ReadFile(filepath.Join(node.Root, "real", "motd"))
	assert.Equal(t, "new", string(got), "target holds %q", got)
	fi, err := os.Lstat(filepath.Join(node.Root, "motd"))
	require.NoError(t, err, "symlink replaced")
	assert.NotEqual(t, fs.FileMode(0), fi.Mode()&fs.ModeSymlink, "symlink replaced: %v", err)
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err, "second converge: %v %+v", err, ch)
	assert.Equal(t, model.ActionNoop, ch.Action, "second converge: %v %+v", err, ch)
}

func TestFileOnControlPlane(t *testing.T) {
	// Root "" takes absolute paths as given.
	ctx := context.Background()
	r := localRegistry(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "motd")
	req := Request{Kind: "file", Name: "motd", Node: Node{Name: "master"}, Spec: model.Spec{"path": p, "content": "cp\n", "mode": "0640"}}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err, "create: %v %+v", err, ch)
	require.Equal(t, model.OutcomeCreated, ch.Outcome, "create: %v %+v", err, ch)
	require.Equal(t, p, ch.After.ID, "create: %v %+v", err, ch)
	require.NoError(t, r.Compensate(ctx, req, jsonRoundTrip(t, ch)))
	_, err = os.Stat(p)
	assert.ErrorIs(t, err, fs.ErrNotExist, "compensation left the file: %v", err)
	req.Spec = model.Spec{"path": "relative/motd", "content": "x"}
	_, err = r.Converge(ctx, req)
	assert.True(t, IsConfigError(err), "relative path on the control plane: %v", err)
}
