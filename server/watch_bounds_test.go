package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// watchedStacks is which stacks w watches now and how many paths.
func (w *Watcher) watchedStacks() (map[string]int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for id, s := range w.stacks {
		out[id] = len(s.targets)
	}
	return out, w.paths
}

// A server watches at most MaxPaths resources: a stack that would take
// it past them is not watched until room is made; a stack deleted, or
// whose watch setting is turned off, is no longer watched.
func TestWatcherIsBoundedAndFollowsTheStore(t *testing.T) {
	dev := testenv.Temporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.DefaultURL(t.TempDir()))
	require.NoError(t, err)
	defer st.Close()
	checks := starter.New(dev.Client, starter.Config{TaskQueue: "watch-bounds", Store: st})
	require.NoError(t, checks.EnsureSearchAttributes(ctx))

	root := t.TempDir()
	stack := func(name string, files int) string {
		s := &model.Stack{Name: name}
		require.NoError(t, st.CreateStack(ctx, s))
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		var res []model.StackResource
		for i := range files {
			res = append(res, model.StackResource{Kind: "File", PkgName: fmt.Sprintf("f%d", i), ID: filepath.Join(dir, fmt.Sprintf("f%d", i))})
		}
		res = append(res, model.StackResource{Kind: "Http", PkgName: "api", ID: "obj-1"}) // not a watched kind
		_, err := st.WriteStackRecord(ctx, s.ID, "stack-"+s.ID+".r", res, "hash", "", true)
		require.NoError(t, err)
		require.NoError(t, st.PutDriftSettings(ctx, s.ID, false, true))
		return s.ID
	}
	small, large := stack("small", 2), stack("large", 3)

	w := NewWatcher(st, checks, WatchOptions{MaxPaths: 4, Resync: time.Hour}, nil)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	wait := func(what string, want map[string]int, paths int) {
		t.Helper()
		require.Eventually(t, func() bool {
			got, n := w.watchedStacks()
			return n == paths && len(got) == len(want) && fmt.Sprint(got) == fmt.Sprint(want)
		}, time.Minute, 10*time.Millisecond, what)
	}
	// Listed in id order: whichever comes first takes its room.
	first, second := map[string]int{small: 2}, map[string]int{large: 3}
	firstPaths, secondPaths := 2, 3
	if large < small {
		first, second, firstPaths, secondPaths = second, first, secondPaths, firstPaths
	}
	wait("one stack watched, the other past the bound", first, firstPaths)

	off := small
	if _, ok := first[large]; ok {
		off = large
	}
	require.NoError(t, st.PutDriftSettings(ctx, off, false, false))
	w.Changed(off)
	w.Changed(otherOf(off, small, large))
	wait("the setting turned off makes room for the other stack", second, secondPaths)

	require.NoError(t, st.DeleteStack(ctx, otherOf(off, small, large)))
	w.Changed(otherOf(off, small, large))
	wait("a deleted stack is no longer watched", map[string]int{}, 0)
}

// otherOf is whichever of a and b is not x.
func otherOf(x, a, b string) string {
	if x == a {
		return b
	}
	return a
}

// A stack's watched resources are its files and directories where they
// live: the control plane's under its root, a local node's under the
// node's directory, an agent node's by the path its agent resolves; its
// packages by dpkg's status file and its services by unit, on their
// node's host (an agent node's on the agent's).
func TestStackTargetsAreWhereTheResourcesLive(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.DefaultURL(t.TempDir()))
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
		{ID: "web", Name: "web", Mode: model.NodeLocal}, {ID: "db", Name: "db", Mode: model.NodeAgent},
	}}))
	s := &model.Stack{Name: "s"}
	require.NoError(t, st.CreateStack(ctx, s))
	_, err = st.WriteStackRecord(ctx, s.ID, "stack-"+s.ID+".r", []model.StackResource{
		{Kind: "File", PkgName: "motd", ID: "/etc/motd"},
		{Kind: "Directory", PkgName: "www", ID: "/srv/www", Node: "web"},
		{Kind: "File", PkgName: "conf", ID: "/etc/db.conf", Node: "db"},
		{Kind: "Exec", PkgName: "reload", ID: "reload", Node: "web"},
		{Kind: "package", PkgName: "nginx", ID: "nginx"},
		{Kind: "service", PkgName: "nginx", ID: "nginx.service", Node: "web"},
		{Kind: "package", PkgName: "pg", ID: "postgresql", Node: "db"},
		{Kind: "service", PkgName: "pg", ID: "postgresql.service", Node: "db"},
	}, "hash", "c1", true)
	require.NoError(t, err)
	nodeRoot := func(cluster, node string) string { return filepath.Join("/data/nodes", cluster, node) }
	root := t.TempDir()
	o := WatchOptions{ControlRoot: root, NodeRoot: nodeRoot, DpkgStatus: "/var/lib/dpkg/status"}

	_, _, ok, err := stackTargets(ctx, st, o, s.ID)
	require.NoError(t, err)
	require.False(t, ok, "a stack without drift settings is watched")
	require.NoError(t, st.PutDriftSettings(ctx, s.ID, true, true))
	targets, skipped, ok, err := stackTargets(ctx, st, o, s.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []watchTarget{
		{path: filepath.Join(root, "etc/motd"), key: "file/motd@"},
		{path: "/data/nodes/c1/web/srv/www", key: "directory/www@web"},
		{path: "/etc/db.conf", key: "file/conf@db", agent: nodeRef{cluster: "c1", node: "db"}},
		{path: "/var/lib/dpkg/status", key: "package/nginx@"},
		{path: "nginx.service", key: "service/nginx@web", unit: true},
		{path: "/var/lib/dpkg/status", key: "package/pg@db", agent: nodeRef{cluster: "c1", node: "db"}, host: true},
		{path: "postgresql.service", key: "service/pg@db", agent: nodeRef{cluster: "c1", node: "db"}, unit: true},
	}, targets)
	require.Zero(t, skipped)
	_, _, ok, err = stackTargets(ctx, st, o, "no-such-stack")
	require.NoError(t, err)
	require.False(t, ok)
}
