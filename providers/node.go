package providers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Node is where a step runs. Root confines every relative path and a
// command's working directory; "" means the control plane with absolute
// paths taken as given.
//
// A local node is a directory standing in for a host's filesystem: with
// Root set, "etc/motd" and "/etc/motd" both name Root/etc/motd, so packages
// written for real hosts run unchanged against a local node. Nothing a step
// does may reach outside Root: ".." that climbs above it and symlinks that
// lead out of it are refused with a ConfigError.
type Node struct {
	Name string `json:"name"`
	Root string `json:"root,omitempty"`
	// Host is the worker serving the node, for the steps that act on
	// the worker itself (reboot); nil on the control plane. Never
	// persisted.
	Host *Host `json:"-"`
}

// Resolve maps a path as written in a spec to the path on the worker's
// filesystem. With Root set, relative and absolute paths both resolve
// inside Root, and every existing component is checked so that neither
// ".." nor a symlink (an intermediate directory or the leaf) leads out of
// it. With Root "" the path must be absolute and is used as given.
//
// The check is made when the path is resolved; a symlink swapped in between
// the check and the use is not caught (the worker owns the node roots).
func (n Node) Resolve(path string) (string, error) {
	if path == "" {
		return "", configErrorf("path", "empty path")
	}
	if strings.ContainsRune(path, 0) {
		return "", configErrorf("path", "path %q contains a NUL byte", path)
	}
	if n.Root == "" {
		if !filepath.IsAbs(path) {
			return "", configErrorf("path", "path %q must be absolute on the control plane", path)
		}
		return filepath.Clean(path), nil
	}
	root, rel, err := n.split(path)
	if err != nil {
		return "", err
	}
	full := filepath.Join(root, rel)
	if rel == "." {
		return full, nil
	}
	// The root's own real path is needed only to judge a symlink, so it is
	// looked up only when one is met.
	realRoot := ""
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break // the rest does not exist yet: nothing to follow
		}
		if err != nil {
			return "", fmt.Errorf("resolve %q on node %s: %w", path, n.Name, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if realRoot == "" {
			if realRoot, err = filepath.EvalSymlinks(root); err != nil {
				return "", fmt.Errorf("node %s: root %s: %w", n.Name, root, err)
			}
		}
		target, err := filepath.EvalSymlinks(cur)
		if err != nil {
			// A dangling link: judge it by where it points.
			link, lerr := os.Readlink(cur)
			if lerr != nil {
				return "", fmt.Errorf("resolve %q on node %s: %w", path, n.Name, lerr)
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(cur), link)
			}
			if !pathWithin(root, link) && !pathWithin(realRoot, link) {
				return "", configErrorf("path", "path %q leaves the root of node %s through symlink %s -> %s", path, n.Name, n.rel(root, cur), link)
			}
			break
		}
		if !pathWithin(realRoot, target) {
			return "", configErrorf("path", "path %q leaves the root of node %s through symlink %s -> %s", path, n.Name, n.rel(root, cur), target)
		}
	}
	return full, nil
}

// WorkDir resolves a command's working directory: "" is the node's root (or
// the worker's own working directory on the control plane); anything else
// resolves like a path.
func (n Node) WorkDir(dir string) (string, error) {
	if dir == "" {
		if n.Root == "" {
			return "", nil
		}
		return filepath.Abs(n.Root)
	}
	return n.Resolve(dir)
}

// OnNode is the path as the node sees it: absolute, cleaned, and for a
// local node relative to its root ("etc/motd" is "/etc/motd"). It is the
// identity a stack records for files and directories.
func (n Node) OnNode(path string) (string, error) {
	if n.Root == "" {
		if !filepath.IsAbs(path) {
			return "", configErrorf("path", "path %q must be absolute on the control plane", path)
		}
		return filepath.Clean(path), nil
	}
	_, rel, err := n.split(path)
	if err != nil {
		return "", err
	}
	return filepath.Join(string(filepath.Separator), rel), nil
}

// split returns the absolute root and the cleaned path below it, refusing
// ".." that climbs above the root.
func (n Node) split(path string) (root, rel string, err error) {
	root, err = filepath.Abs(n.Root)
	if err != nil {
		return "", "", fmt.Errorf("node %s: root %q: %w", n.Name, n.Root, err)
	}
	rel = filepath.Clean(strings.TrimLeft(path, string(filepath.Separator)))
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", configErrorf("path", "path %q escapes the root of node %s", path, n.Name)
	}
	return root, rel, nil
}

// rel shows a host path as the node sees it, for messages.
func (n Node) rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return string(filepath.Separator) + r
}

// pathWithin reports whether p is dir or below it.
func pathWithin(dir, p string) bool {
	if dir == p {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}
