package providers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// syncLog records the paths fsynced under a context.
type syncLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *syncLog) observe(ctx context.Context) context.Context {
	return WithSyncObserver(ctx, func(p string) {
		l.mu.Lock()
		l.paths = append(l.paths, p)
		l.mu.Unlock()
	})
}

func (l *syncLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.paths
	l.paths = nil
	slices.Sort(out)
	return out
}

func TestFileSyncsAtOnceOrDeferred(t *testing.T) {
	tests := []struct {
		name     string
		deferred bool
		files    []string
	}{
		{"single apply syncs its file and directory", false, []string{"a"}},
		{"single applies each sync", false, []string{"a", "b"}},
		{"deferred writes sync nothing until Sync", true, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			dir := filepath.Join(node.Root, "d")
			require.NoError(t, os.Mkdir(dir, 0o755))
			var log syncLog
			ctx := log.observe(context.Background())
			pending := NewDeferredSync()
			if tt.deferred {
				ctx = WithDeferredSync(ctx, pending)
			}
			for _, name := range tt.files {
				ch, err := r.Converge(ctx, Request{Kind: "file", Name: name, Node: node, Spec: model.Spec{"path": "/d/" + name, "content": name}})
				require.NoError(t, err, "converge %s: %v %+v", name, err, ch)
				require.Equal(t, model.OutcomeCreated, ch.Outcome, "converge %s: %v %+v", name, err, ch)
				got, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err, "%s holds %q, %v", name, got, err)
				require.Equal(t, name, string(got), "%s holds %q, %v", name, got, err)
			}
			if !tt.deferred {
				// Each create syncs its file, made unnamed, before it is
				// linked in, and the directory after it.
				var want []string
				for _, name := range tt.files {
					want = append(want, filepath.Join(dir, name), dir)
				}
				slices.Sort(want)
				got := log.take()
				require.True(t, slices.Equal(got, want), "synced %v, want %v", got, want)
				f, d := pending.Pending()
				require.Equal(t, 0, f, "pending %d files, %d dirs", f, d)
				require.Equal(t, 0, d, "pending %d files, %d dirs", f, d)
				return
			}
			got := log.take()
			require.Empty(t, got, "deferred writes synced")
			f, d := pending.Pending()
			require.Equal(t, len(tt.files), f, "pending %d files, %d dirs; want %d, 1", f, d, len(tt.files))
			require.Equal(t, 1, d, "pending %d files, %d dirs; want %d, 1", f, d, len(tt.files))
			require.NoError(t, pending.Sync(ctx))
			want := []string{dir}
			for _, name := range tt.files {
				want = append(want, filepath.Join(dir, name))
			}
			slices.Sort(want)
			got = log.take()
			require.True(t, slices.Equal(got, want), "Sync synced %v, want each file and the directory once: %v", got, want)
			// Synced is forgotten: a second Sync has nothing to do.
			require.NoError(t, pending.Sync(ctx))
			got = log.take()
			require.Empty(t, got, "second Sync synced")
		})
	}
}

func TestDirectoryCreatedUnderDeferredSyncRecordsItsParent(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	pending := NewDeferredSync()
	ctx := WithDeferredSync(context.Background(), pending)
	ch, err := r.Converge(ctx, Request{Kind: "directory", Name: "d", Node: node, Spec: model.Spec{"path": "/d"}})
	require.NoError(t, err, "converge: %v %+v", err, ch)
	require.Equal(t, model.OutcomeCreated, ch.Outcome, "converge: %v %+v", err, ch)
	var log syncLog
	require.NoError(t, pending.Sync(log.observe(ctx)))
	got := log.take()
	require.True(t, slices.Equal(got, []string{node.Root}), "synced %v, want the parent %s", got, node.Root)
}

func TestDeferredSyncSkipsWhatIsGone(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	pending := NewDeferredSync()
	ctx := WithDeferredSync(context.Background(), pending)
	_, err := r.Converge(ctx, Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "x"}})
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(node.Root, "f")))
	var log syncLog
	require.NoError(t, pending.Sync(log.observe(ctx)), "sync after the file was removed")
	got := log.take()
	require.True(t, slices.Equal(got, []string{node.Root}), "synced %v", got)
}

// TestDeferredSyncSyncsAFilesystemOfManyFilesOnce checks that a unit's
// many files on one filesystem are made durable by one sync of that
// filesystem, while the few on another are still synced one by one.
func TestDeferredSyncSyncsAFilesystemOfManyFilesOnce(t *testing.T) {
	r := localRegistry(t)
	many := localNode(t)
	require.NoError(t, os.Mkdir(filepath.Join(many.Root, "d"), 0o755))
	// /dev/shm is a filesystem of its own (tmpfs), beside the test's
	// temporary directory.
	shm, err := os.MkdirTemp("/dev/shm", "cairn-sync-")
	require.NoError(t, err, "a directory on a second filesystem")
	t.Cleanup(func() { _ = os.RemoveAll(shm) })
	few := Node{Name: "shm", Root: shm}
	pending := NewDeferredSync()
	ctx := WithDeferredSync(context.Background(), pending)
	converge := func(node Node, path string) {
		ch, err := r.Converge(ctx, Request{Kind: "file", Name: path, Node: node, Spec: model.Spec{"path": path, "content": path}})
		require.NoError(t, err, "converge %s: %v %+v", path, err, ch)
		require.Equal(t, model.OutcomeCreated, ch.Outcome, "converge %s: %+v", path, ch)
	}
	for i := range syncfsAtLeast + 8 {
		converge(many, fmt.Sprintf("/d/f%03d", i))
	}
	converge(few, "/a")
	converge(few, "/b")

	var log syncLog
	require.NoError(t, pending.Sync(log.observe(ctx)))
	got := log.take()
	want := []string{filepath.Join(many.Root, "d"), shm, filepath.Join(shm, "a"), filepath.Join(shm, "b")}
	slices.Sort(want)
	require.True(t, slices.Equal(got, want), "synced %v, want the first filesystem once (through %s) and the second's files and directory each: %v", got, want[0], want)
	f, d := pending.Pending()
	require.Zero(t, f+d, "pending %d files, %d dirs after Sync", f, d)
}
