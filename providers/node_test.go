package providers

import (
	"os"
	"path/filepath"
	"testing"
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
			if !IsConfigError(err) {
				t.Errorf("Resolve(%q) = %q, %v; want a ConfigError", tt.path, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.path, err)
			continue
		}
		if want := filepath.Join(root, tt.want); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, want)
		}
	}
}

func TestNodeResolveControlPlane(t *testing.T) {
	cp := Node{Name: "master"}
	if got, err := cp.Resolve("/etc/../etc/motd/"); err != nil || got != "/etc/motd" {
		t.Errorf("Resolve = %q, %v; want /etc/motd", got, err)
	}
	if _, err := cp.Resolve("etc/motd"); !IsConfigError(err) {
		t.Errorf("relative path on the control plane: err = %v, want a ConfigError", err)
	}
	if got, err := cp.OnNode("/srv/app/"); err != nil || got != "/srv/app" {
		t.Errorf("OnNode = %q, %v", got, err)
	}
	if dir, err := cp.WorkDir(""); err != nil || dir != "" {
		t.Errorf("WorkDir(\"\") = %q, %v; want the worker's own", dir, err)
	}
}

func TestNodeOnNodeAndWorkDir(t *testing.T) {
	root := t.TempDir()
	node := Node{Name: "n1", Root: root}
	for in, want := range map[string]string{"etc/motd": "/etc/motd", "/etc/motd/": "/etc/motd", "a/./b/../c": "/a/c", "/": "/"} {
		if got, err := node.OnNode(in); err != nil || got != want {
			t.Errorf("OnNode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := node.OnNode("../x"); !IsConfigError(err) {
		t.Errorf("OnNode(../x): err = %v, want a ConfigError", err)
	}
	if dir, err := node.WorkDir(""); err != nil || dir != root {
		t.Errorf("WorkDir(\"\") = %q, %v; want the root %q", dir, err, root)
	}
	if dir, err := node.WorkDir("/srv"); err != nil || dir != filepath.Join(root, "srv") {
		t.Errorf("WorkDir(/srv) = %q, %v", dir, err)
	}
	if _, err := node.WorkDir("../.."); !IsConfigError(err) {
		t.Errorf("WorkDir(../..): err = %v, want a ConfigError", err)
	}
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
