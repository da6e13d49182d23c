package providers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// mkdirParents creates the missing directories above host (a path on the
// worker, already resolved inside the node's root) with mode, top down,
// and returns the ones it created, deepest last, so that an undo can remove
// them in reverse. Existing directories are left as they are.
func mkdirParents(host string, mode fs.FileMode) ([]string, error) {
	var missing []string
	for dir := filepath.Dir(host); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("%s is not a directory", dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, dir)
		if parent := filepath.Dir(dir); parent == dir {
			break
		}
	}
	created := make([]string, 0, len(missing))
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], mode); err != nil && !errors.Is(err, fs.ErrExist) {
			return created, fmt.Errorf("create directory %s: %w", missing[i], err)
		}
		// Mkdir applies the umask: set the mode asked for.
		if err := os.Chmod(missing[i], mode); err != nil {
			return created, fmt.Errorf("chmod %s: %w", missing[i], err)
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// removeEmptyDirs removes directories deepest first, keeping any that are
// no longer empty.
func removeEmptyDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}

// onNodeOf is a worker path inside the node's root as the node sees it
// ("/etc/x" for <root>/etc/x); on the control plane the path itself.
func (n Node) onNodeOf(host string) string {
	if n.Root == "" {
		return host
	}
	root, err := filepath.Abs(n.Root)
	if err != nil {
		return host
	}
	rel, err := filepath.Rel(root, host)
	if err != nil || rel == ".." || len(rel) > 2 && rel[:3] == "../" {
		return host
	}
	return "/" + filepath.ToSlash(rel)
}
