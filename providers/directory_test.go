package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestDirectoryRefusals(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	tests := []struct {
		name      string
		setup     func(t *testing.T, root string)
		spec      model.Spec
		configErr bool
		notEmpty  bool
		wantMsg   string
	}{
		{name: "parent missing is not created", spec: model.Spec{"path": "/a/b/c"},
			wantMsg: "parent directory of /a/b/c does not exist: declare a directory resource for /a/b"},
		{name: "a file is in the way", setup: func(t *testing.T, root string) { mustWrite(t, filepath.Join(root, "srv"), nil, 0o644) },
			spec: model.Spec{"path": "/srv"}, wantMsg: "/srv exists and is not a directory"},
		{name: "absent refuses a non-empty directory", setup: func(t *testing.T, root string) {
			mustMkdir(t, filepath.Join(root, "srv", "sub"))
			mustWrite(t, filepath.Join(root, "srv", "data.db"), []byte("precious"), 0o600)
		}, spec: model.Spec{"path": "/srv", "ensure": "absent"}, notEmpty: true, wantMsg: "/srv holds data.db, sub"},
		{name: "symlink escape", setup: func(t *testing.T, root string) { mustSymlink(t, outside, filepath.Join(root, "out")) },
			spec: model.Spec{"path": "/out/new"}, configErr: true, wantMsg: "leaves the root"},
		{name: "dot-dot escape", spec: model.Spec{"path": "/../new"}, configErr: true, wantMsg: "escapes the root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			if tt.setup != nil {
				tt.setup(t, node.Root)
			}
			before := snapshot(t, node.Root)
			_, err := r.Converge(ctx, Request{Kind: "directory", Name: "d", Node: node, Spec: tt.spec})
			require.Error(t, err, "converge succeeded")
			require.Equal(t, tt.configErr, IsConfigError(err), "error %v: config %v, not-empty %v", err, IsConfigError(err), errors.Is(err, ErrNotEmpty))
			assert.Equal(t, tt.notEmpty, errors.Is(err, ErrNotEmpty), "error %v: config %v, not-empty %v", err, IsConfigError(err), errors.Is(err, ErrNotEmpty))
			assert.Contains(t, err.Error(), tt.wantMsg, "error %q does not say %q", err, tt.wantMsg)
			got := snapshot(t, node.Root)
			assert.Len(t, got, len(before), "refused apply changed the root")
			entries, _ := os.ReadDir(outside)
			assert.Empty(t, entries, "created outside the root")
		})
	}
}

func TestDirectoryCompensationKeepsForeignEntries(t *testing.T) {
	// Compensating a create removes the directory only when it is empty:
	// entries put there by anything else are kept, and the compensation
	// says so.
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	req := Request{Kind: "directory", Name: "app", Node: node, Spec: model.Spec{"path": "/app"}}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err, "create: %v %+v", err, ch)
	require.Equal(t, model.OutcomeCreated, ch.Outcome, "create: %v %+v", err, ch)
	mustWrite(t, filepath.Join(node.Root, "app", "upload.bin"), []byte("someone's data"), 0o644)
	err = r.Compensate(ctx, req, jsonRoundTrip(t, ch))
	require.ErrorIs(t, err, ErrNotEmpty, "compensate: %v, want ErrNotEmpty naming upload.bin", err)
	require.Contains(t, err.Error(), "upload.bin", "compensate: %v, want ErrNotEmpty naming upload.bin", err)
	got, _ := os.ReadFile(filepath.Join(node.Root, "app", "upload.bin"))
	assert.Equal(t, "someone's data", string(got), "foreign entry lost")
	// Once the entry is gone (its own resource compensated), compensation
	// completes.
	require.NoError(t, os.Remove(filepath.Join(node.Root, "app", "upload.bin")))
	require.NoError(t, r.Compensate(ctx, req, jsonRoundTrip(t, ch)))
	_, err = os.Stat(filepath.Join(node.Root, "app"))
	assert.ErrorIs(t, err, os.ErrNotExist, "directory left after compensation: %v", err)
}

func TestDirectoryThenFileCompensateInReverse(t *testing.T) {
	// A directory and a file inside it, applied in dependency order and
	// compensated in reverse, leave the root as it was.
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	before := snapshot(t, node.Root)
	reqs := []Request{
		{Kind: "directory", Name: "etc", Node: node, Spec: model.Spec{"path": "/etc", "mode": "0750"}},
		{Kind: "directory", Name: "app", Node: node, Spec: model.Spec{"path": "/etc/app"}},
		{Kind: "file", Name: "conf", Node: node, Spec: model.Spec{"path": "/etc/app/app.conf", "content": "a=1\n"}},
	}
	var changes []Change
	for _, req := range reqs {
		ch, err := r.Converge(ctx, req)
		require.NoError(t, err)
		changes = append(changes, jsonRoundTrip(t, ch))
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		err := r.Compensate(ctx, reqs[i], changes[i])
		require.NoError(t, err, "compensate %s: %v", reqs[i].Name, err)
	}
	got := snapshot(t, node.Root)
	assert.Len(t, got, len(before), "root not restored")
}
