package providers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

func TestSyncLocalMirror(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	node := Node{Name: "n1", Root: root}
	writeTree(t, filepath.Join(root, "srv/mirror"), map[string]string{"a.pp": "class a {}", "sub/b.pp": "class b {}"}, 0o640)
	writeTree(t, filepath.Join(root, "etc/puppet/modules"), map[string]string{"stale.pp": "old", "olddir/x": "old", "a.pp": "changed"}, 0o644)
	reg := fuelRegistry(nil)
	req := Request{Kind: "sync", Name: "rsync_core_puppet", Node: node,
		Spec: model.Spec{"src": "/srv/mirror", "dst": "/etc/puppet/modules", "timeout": 180}}

	plan, err := reg.Converge(ctx, Request{Kind: req.Kind, Name: req.Name, Node: node, Spec: req.Spec, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionRun, plan.Action)
	assert.EqualValues(t, 5, plan.Before.Outputs["pending"], "sub created, a.pp and sub/b.pp written, stale.pp and olddir removed: %v", plan.Before.Outputs)
	assert.Equal(t, map[string]string{"stale.pp": "old", "olddir/x": "old", "a.pp": "changed"}, readTree(t, filepath.Join(root, "etc/puppet/modules")), "a dry-run changes nothing")

	ch, err := reg.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionRun, ch.Action)
	assert.True(t, ch.Irreversible, "a mirror keeps nothing of what it replaced")
	assert.Equal(t, map[string]string{"a.pp": "class a {}", "sub/b.pp": "class b {}"}, readTree(t, filepath.Join(root, "etc/puppet/modules")))
	fi, err := os.Stat(filepath.Join(root, "etc/puppet/modules/sub/b.pp"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "modes follow the source")

	again, err := reg.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action, "in sync: nothing to do")

	err = reg.Compensate(ctx, req, ch)
	assert.ErrorIs(t, err, ErrIrreversible)
}

func TestSyncRefuses(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	reg := fuelRegistry(nil)
	tests := []struct {
		name string
		spec model.Spec
		want string
	}{
		{"missing source", model.Spec{"src": "/nope", "dst": "/d"}, "src"},
		{"source out of the root", model.Spec{"src": "/../../etc", "dst": "/d"}, "escapes"},
		{"http source", model.Spec{"src": "http://example.com/x", "dst": "/d"}, "want an rsync:// URL"},
		{"no dst", model.Spec{"src": "/a"}, "dst: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reg.Converge(ctx, Request{Kind: "sync", Name: "s", Node: Node{Name: "n", Root: root}, Spec: tt.spec})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestSyncCancelled(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("f%03d", i)] = "x"
	}
	writeTree(t, filepath.Join(root, "src"), files, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	_, err := fuelRegistry(nil).Converge(ctx, Request{Kind: "sync", Name: "s", Node: Node{Name: "n", Root: root},
		Spec: model.Spec{"src": "/src", "dst": "/dst"}})
	require.Error(t, err)
}

func TestSyncFromRsyncDaemon(t *testing.T) {
	ctx := context.Background()
	served := t.TempDir()
	writeTree(t, filepath.Join(served, "9.0/modules"), map[string]string{"osnailyfacter/init.pp": "class osnailyfacter {}", "ntp.pp": "class ntp {}"}, 0o644)
	port := testenv.Rsyncd(t, served)
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "etc/puppet/modules"), map[string]string{"stale.pp": "old"}, 0o644)
	reg := fuelRegistry(nil)
	req := Request{Kind: "sync", Name: "rsync_core_puppet", Node: Node{Name: "n1", Root: root},
		Spec: model.Spec{"src": fmt.Sprintf("rsync://127.0.0.1:%d/puppet/9.0/modules/", port), "dst": "/etc/puppet/modules", "timeout": 60}}

	plan, err := reg.Converge(ctx, Request{Kind: req.Kind, Name: req.Name, Node: req.Node, Spec: req.Spec, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionRun, plan.Action)
	assert.NotZero(t, plan.Before.Outputs["pending"])
	assert.Equal(t, map[string]string{"stale.pp": "old"}, readTree(t, filepath.Join(root, "etc/puppet/modules")))

	ch, err := reg.Converge(ctx, req)
	require.NoError(t, err, "%v", ch.After.Outputs)
	assert.Equal(t, map[string]string{"osnailyfacter/init.pp": "class osnailyfacter {}", "ntp.pp": "class ntp {}"}, readTree(t, filepath.Join(root, "etc/puppet/modules")))

	again, err := reg.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action)

	bad := req
	bad.Spec = model.Spec{"src": fmt.Sprintf("rsync://127.0.0.1:%d/nomodule/", port), "dst": "/x"}
	_, err = reg.Converge(ctx, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rsync exited")
}
