package providers

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestFileCreateWriteEdges covers a create's write: a stale temporary file
// is replaced and a parent that is missing or not a directory is reported,
// on a rooted node and on the control plane.
func TestFileCreateWriteEdges(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		path    string // below the node's directory
		wantMsg string // "" for success
	}{
		{name: "clean create", path: "f"},
		{name: "stale temporary file", path: "f", setup: func(t *testing.T, dir string) {
			mustWrite(t, tempPath(filepath.Join(dir, "f")), []byte("half"), 0o400)
		}},
		{name: "parent missing", path: "sub/f", wantMsg: "parent directory of"},
		{name: "parent is a file", path: "plain/f", wantMsg: "not a directory", setup: func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "plain"), []byte("x"), 0o644)
		}},
	}
	for _, rooted := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(tt.name+map[bool]string{true: " (rooted)", false: " (control plane)"}[rooted], func(t *testing.T) {
				r := localRegistry(t)
				dir := t.TempDir()
				node := Node{Name: "cp"}
				spec := model.Spec{"path": filepath.Join(dir, tt.path), "content": "data"}
				if rooted {
					node.Root = dir
					spec["path"] = "/" + tt.path
				}
				if tt.setup != nil {
					tt.setup(t, dir)
				}
				target := filepath.Join(dir, tt.path)
				ch, err := r.Converge(context.Background(), Request{Kind: "file", Name: "f", Node: node, Spec: spec})
				if tt.wantMsg != "" {
					require.Error(t, err, "got %v, want an error with %q", err, tt.wantMsg)
					require.Contains(t, err.Error(), tt.wantMsg, "got %v, want an error with %q", err, tt.wantMsg)
					_, err := os.Lstat(target)
					require.Error(t, err, "%s was created", target)
					return
				}
				require.NoError(t, err, "converge: %v %+v", err, ch)
				require.Equal(t, model.OutcomeCreated, ch.Outcome, "converge: %v %+v", err, ch)
				got, _ := os.ReadFile(target)
				require.Equal(t, "data", string(got), "target holds %q", got)
				_, err = os.Lstat(tempPath(target))
				require.ErrorIs(t, err, fs.ErrNotExist, "temporary file left behind: %v", err)
			})
		}
	}
}

// TestReadRegularWhateverTheStatSaw checks that a file is read to its end
// even when it changed size since the stat that sized the buffer.
func TestReadRegularWhateverTheStatSaw(t *testing.T) {
	big := strings.Repeat("0123456789", 10_000)
	tests := []struct {
		name string
		data string
		size int64
	}{
		{"as stated", "hello", 5},
		{"empty", "", 0},
		{"grew since", big, 3},
		{"shrank since", "hi", 4096},
		{"stat said nothing", big, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			mustWrite(t, path, []byte(tt.data), 0o644)
			got, err := readRegular(path, tt.size)
			require.NoError(t, err, "read %d bytes, %v; want %d", len(got), err, len(tt.data))
			require.Equal(t, tt.data, string(got), "read %d bytes, %v; want %d", len(got), err, len(tt.data))
		})
	}
	_, err := readRegular(filepath.Join(t.TempDir(), "missing"), 0)
	require.ErrorIs(t, err, fs.ErrNotExist, "missing file: %v", err)
}

// TestFileWriteSetsSpecialModeBits checks that the mode a write sets
// includes setgid and sticky bits, not only the permissions.
func TestFileWriteSetsSpecialModeBits(t *testing.T) {
	tests := []struct {
		mode string
		want fs.FileMode
	}{
		{"0640", 0o640},
		{"2750", 0o750 | fs.ModeSetgid},
		{"1777", 0o777 | fs.ModeSticky},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			req := Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "x", "mode": tt.mode}}
			_, err := r.Converge(context.Background(), req)
			require.NoError(t, err)
			fi, err := os.Stat(filepath.Join(node.Root, "f"))
			require.NoError(t, err)
			got := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
			require.Equal(t, tt.want, got, "mode")
			ch, err := r.Converge(context.Background(), req)
			require.NoError(t, err, "second converge: %v %+v", err, ch)
			require.Equal(t, model.ActionNoop, ch.Action, "second converge: %v %+v", err, ch)
		})
	}
}

// TestCreateFindsItsNameTaken checks a create whose target appeared after
// it was read as absent: a symlink planted at the name is replaced, never
// followed, and the new bytes land at the name itself.
func TestCreateFindsItsNameTaken(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	mustWrite(t, outside, []byte("keep"), 0o600)
	target := filepath.Join(dir, "f")
	require.NoError(t, os.Symlink(outside, target))

	loc := fileLocation{id: target, host: target, target: target, absent: true}
	require.NoError(t, writeAtomic(context.Background(), loc, []byte("new"), 0o640, false))

	fi, err := os.Lstat(target)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "%s is %s, want a regular file", target, fi.Mode())
	require.Equal(t, fs.FileMode(0o640), fi.Mode().Perm(), "mode %s", fi.Mode())
	got, _ := os.ReadFile(target)
	require.Equal(t, "new", string(got))
	kept, _ := os.ReadFile(outside)
	require.Equal(t, "keep", string(kept), "the symlink was followed")
	_, err = os.Lstat(tempPath(target))
	require.ErrorIs(t, err, fs.ErrNotExist, "temporary file left behind: %v", err)
}

// TestFileRewriteKeepsSpecialModeBits: a file's bytes written again keep
// its setuid and setgid bits (keeping the owner must not clear them).
func TestFileRewriteKeepsSpecialModeBits(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	for _, content := range []string{"one", "two"} {
		req := Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": content, "mode": "6755"}}
		ch, err := r.Converge(context.Background(), req)
		require.NoError(t, err, "converge %q: %v %+v", content, err, ch)
		fi, err := os.Stat(filepath.Join(node.Root, "f"))
		require.NoError(t, err)
		require.Equal(t, 0o755|fs.ModeSetuid|fs.ModeSetgid, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid), "mode after writing %q", content)
	}
}
