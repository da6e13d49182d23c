package providers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNodeResolve(t *testing.T) {
	outside := t.TempDir()
	root := t.TempDir()
	mustMkdir(t, filepath.Join(root, "etc"))
	mustMkdir(t, filepath.Join(root, "data"))
	// Symlinks inside the root that stay inside are fine.
	mustSymlink(t, filepath.Join(root, "data"), filepath.Join(root, "srv"))
	mustSymlink(t, "../etc", filepath.Join(root, "data", "conf"))
	// Symlinks that lead out of the root are refused wherever they sit.
	mustSymlink(t, outside, filepath.Join(root, "escape"))
	mustSymlink(t, "/etc/passwd", filepath.Join(root, "etc", "passwd"))
	mustSymlink(t, "../../../../../../../../tmp", filepath.Join(root, "etc", "up"))
	mustSymlink(t, filepath.Join(outside, "nothing-here"), filepath.Join(root, "dangling"))
	mustSymlink(t, filepath.Join(root, "etc", "later"), filepath.Join(root, "pending"))
	node := Node{Name: "n1", Root: root}

	tests := []struct {
		path      string
		want      string // relative to root
		configErr bool
	}{
		{path: "etc/motd", want: "etc/motd"},
		{path: "/etc/motd", want: "etc/motd"}, // absolute paths are node paths
		{path: "/", want: "."},
		{path: "etc/../data/x", want: "data/x"},
		{path: "srv/x", want: "srv/x"},
		{path: "data/conf/motd", want: "data/conf/motd"},
		{path: "pending", want: "pending"}, // dangling, but pointing inside
		{path: "new/dir/file", want: "new/dir/file"},
		{path: "../x", configErr: true},
		{path: "/../etc/passwd", configErr: true},
		{path: "etc/../../x", configErr: true},
		{path: "..", configErr: true},
		{path: "escape/secret", configErr: true}, // symlinked parent
		{path: "escape", configErr: true},        // symlinked leaf
		{path: "etc/passwd", configErr: true},    // leaf symlink to an absolute path outside
		{path: "etc/up/x", configErr: true},      // relative symlink climbing out
		{path: "dangling", configErr: true},      // dangling symlink pointing outside
		{path: "", configErr: true},
		{path: "etc/\x00", configErr: true},
	}
	for _, tt := range tests {
		got, err := node.Resolve(tt.path)
		if tt.configErr {
			assert.True(t, IsConfigError(err), "Resolve(%q) = %q, %v; want a ConfigError", tt.path, got, err)
			continue
		}
		if !assert.NoError(t, err, "Resolve(%q)", tt.path) {
			continue
		}
		want := filepath.Join(root, tt.want)
		assert.Equal(t, want, got, "Resolve(%q) = %q, want %q", tt.path, got, want)
	}
}

func TestNodeResolveControlPlane(t *testing.T) {
	cp := Node{Name: "master"}
	got, err := cp.Resolve("/etc/../etc/motd/")
	require.NoError(t, err, "Resolve = %q, %v; want /etc/motd", got, err)
	assert.Equal(t, "/etc/motd", got, "Resolve = %q, %v; want /etc/motd", got, err)
	_, err = cp.Resolve("etc/motd")
	assert.True(t, IsConfigError(err), "relative path on the control plane: err = %v, want a ConfigError", err)
	got, err = cp.OnNode("/srv/app/")
	require.NoError(t, err, "OnNode = %q, %v", got, err)
	assert.Equal(t, "/srv/app", got, "OnNode = %q, %v", got, err)
	dir, err := cp.WorkDir("")
	require.NoError(t, err, "WorkDir(\"\") = %q, %v; want the worker's own", dir, err)
	assert.Empty(t, dir, "WorkDir(\"\") = %q, %v; want the worker's own", dir, err)
}

func TestNodeOnNodeAndWorkDir(t *testing.T) {
	root := t.TempDir()
	node := Node{Name: "n1", Root: root}
	for in, want := range map[string]string{"etc/motd": "/etc/motd", "/etc/motd/": "/etc/motd", "a/./b/../c": "/a/c", "/": "/"} {
		got, err := node.OnNode(in)
		require.NoError(t, err, "OnNode(%q) = %q, %v; want %q", in, got, err, want)
		assert.Equal(t, want, got, "OnNode(%q) = %q, %v; want %q", in, got, err, want)
	}
	_, err := node.OnNode("../x")
	assert.True(t, IsConfigError(err), "OnNode(../x): err = %v, want a ConfigError", err)
	dir, err := node.WorkDir("")
	require.NoError(t, err, "WorkDir(\"\") = %q, %v; want the root %q", dir, err, root)
	assert.Equal(t, root, dir, "WorkDir(\"\") = %q, %v; want the root %q", dir, err, root)
	dir, err = node.WorkDir("/srv")
	require.NoError(t, err, "WorkDir(/srv) = %q, %v", dir, err)
	assert.Equal(t, filepath.Join(root, "srv"), dir, "WorkDir(/srv) = %q, %v", dir, err)
	_, err = node.WorkDir("../..")
	assert.True(t, IsConfigError(err), "WorkDir(../..): err = %v, want a ConfigError", err)
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755)) // whatever the umask
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	require.NoError(t, os.Symlink(target, link))
}

func mustWrite(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, data, mode))
	require.NoError(t, os.Chmod(path, mode))
}
