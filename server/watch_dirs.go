package server

import (
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// dirWatches are the kernel's watches of the directories watched paths
// lie in, counted: a directory is watched while a watched path lies in
// it. Watching a path's directory rather than the path keeps a file
// deleted and written anew, or renamed into place, seen. The server's
// Watcher and an agent's watcher share it. Not safe for concurrent use.
// Memory: one entry per distinct directory.
type dirWatches struct {
	fs   *fsnotify.Watcher
	dirs map[string]int
}

func newDirWatches(fs *fsnotify.Watcher) dirWatches {
	return dirWatches{fs: fs, dirs: map[string]int{}}
}

// add counts path in its directory and watches the directory when it is
// the first, or when again says so (adding a watched directory again is
// harmless and re-arms one that was removed and made again).
func (d *dirWatches) add(path string, again bool) error {
	dir := filepath.Dir(path)
	d.dirs[dir]++
	if d.dirs[dir] == 1 || again {
		return d.fs.Add(dir)
	}
	return nil
}

// remove uncounts path, and stops watching its directory when it was the
// last path there.
func (d *dirWatches) remove(path string) {
	dir := filepath.Dir(path)
	if d.dirs[dir]--; d.dirs[dir] <= 0 {
		delete(d.dirs, dir)
		_ = d.fs.Remove(dir)
	}
}
