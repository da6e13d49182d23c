package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
			if err == nil {
				t.Fatal("converge succeeded")
			}
			if IsConfigError(err) != tt.configErr || errors.Is(err, ErrNotEmpty) != tt.notEmpty {
				t.Errorf("error %v: config %v, not-empty %v", err, IsConfigError(err), errors.Is(err, ErrNotEmpty))
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
			if got := snapshot(t, node.Root); len(got) != len(before) {
				t.Errorf("refused apply changed the root: %v", got)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("created outside the root: %v", entries)
			}
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
	if err != nil || ch.Outcome != model.OutcomeCreated {
		t.Fatalf("create: %v %+v", err, ch)
	}
	mustWrite(t, filepath.Join(node.Root, "app", "upload.bin"), []byte("someone's data"), 0o644)
	err = r.Compensate(ctx, req, jsonRoundTrip(t, ch))
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "upload.bin") {
		t.Fatalf("compensate: %v, want ErrNotEmpty naming upload.bin", err)
	}
	if got, _ := os.ReadFile(filepath.Join(node.Root, "app", "upload.bin")); string(got) != "someone's data" {
		t.Errorf("foreign entry lost")
	}
	// Once the entry is gone (its own resource compensated), compensation
	// completes.
	if err := os.Remove(filepath.Join(node.Root, "app", "upload.bin")); err != nil {
		t.Fatal(err)
	}
	if err := r.Compensate(ctx, req, jsonRoundTrip(t, ch)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(node.Root, "app")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory left after compensation: %v", err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		changes = append(changes, jsonRoundTrip(t, ch))
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		if err := r.Compensate(ctx, reqs[i], changes[i]); err != nil {
			t.Fatalf("compensate %s: %v", reqs[i].Name, err)
		}
	}
	if got := snapshot(t, node.Root); len(got) != len(before) {
		t.Errorf("root not restored: %v", got)
	}
}
