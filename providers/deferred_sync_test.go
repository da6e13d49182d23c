package providers

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

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
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var log syncLog
			ctx := log.observe(context.Background())
			pending := NewDeferredSync()
			if tt.deferred {
				ctx = WithDeferredSync(ctx, pending)
			}
			for _, name := range tt.files {
				ch, err := r.Converge(ctx, Request{Kind: "file", Name: name, Node: node, Spec: model.Spec{"path": "/d/" + name, "content": name}})
				if err != nil || ch.Outcome != model.OutcomeCreated {
					t.Fatalf("converge %s: %v %+v", name, err, ch)
				}
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != name {
					t.Fatalf("%s holds %q, %v", name, got, err)
				}
			}
			if !tt.deferred {
				// Each write syncs its temporary file before the rename
				// and the directory after it.
				var want []string
				for _, name := range tt.files {
					want = append(want, tempPath(filepath.Join(dir, name)), dir)
				}
				slices.Sort(want)
				if got := log.take(); !slices.Equal(got, want) {
					t.Fatalf("synced %v, want %v", got, want)
				}
				if f, d := pending.Pending(); f != 0 || d != 0 {
					t.Fatalf("pending %d files, %d dirs", f, d)
				}
				return
			}
			if got := log.take(); len(got) != 0 {
				t.Fatalf("deferred writes synced %v", got)
			}
			if f, d := pending.Pending(); f != len(tt.files) || d != 1 {
				t.Fatalf("pending %d files, %d dirs; want %d, 1", f, d, len(tt.files))
			}
			if err := pending.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			want := []string{dir}
			for _, name := range tt.files {
				want = append(want, filepath.Join(dir, name))
			}
			slices.Sort(want)
			if got := log.take(); !slices.Equal(got, want) {
				t.Fatalf("Sync synced %v, want each file and the directory once: %v", got, want)
			}
			// Synced is forgotten: a second Sync has nothing to do.
			if err := pending.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if got := log.take(); len(got) != 0 {
				t.Fatalf("second Sync synced %v", got)
			}
		})
	}
}

func TestDirectoryCreatedUnderDeferredSyncRecordsItsParent(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	pending := NewDeferredSync()
	ctx := WithDeferredSync(context.Background(), pending)
	ch, err := r.Converge(ctx, Request{Kind: "directory", Name: "d", Node: node, Spec: model.Spec{"path": "/d"}})
	if err != nil || ch.Outcome != model.OutcomeCreated {
		t.Fatalf("converge: %v %+v", err, ch)
	}
	var log syncLog
	if err := pending.Sync(log.observe(ctx)); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); !slices.Equal(got, []string{node.Root}) {
		t.Fatalf("synced %v, want the parent %s", got, node.Root)
	}
}

func TestDeferredSyncSkipsWhatIsGone(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	pending := NewDeferredSync()
	ctx := WithDeferredSync(context.Background(), pending)
	if _, err := r.Converge(ctx, Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(node.Root, "f")); err != nil {
		t.Fatal(err)
	}
	var log syncLog
	if err := pending.Sync(log.observe(ctx)); err != nil {
		t.Fatalf("sync after the file was removed: %v", err)
	}
	if got := log.take(); !slices.Equal(got, []string{node.Root}) {
		t.Fatalf("synced %v", got)
	}
}
