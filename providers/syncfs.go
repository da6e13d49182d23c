package providers

import (
	"context"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// syncfsAtLeast is how many recorded files on one filesystem make a
// DeferredSync sync that filesystem whole rather than each file. Below
// it, fsyncs of the files themselves (syncParallel at a time) cost less
// than waiting on everything else unwritten there.
const syncfsAtLeast = 32

// syncFilesystems syncs whole (syncfs) each filesystem holding at least
// syncfsAtLeast of files, and returns the files and directories left to
// sync one by one: those on other filesystems. A file written through a
// directory lives on that directory's filesystem (a rename or link cannot
// cross one), so each file's directory tells where it is, with one open
// and fstat per directory. A directory that is gone is left to the
// one-by-one sync, which skips it.
func syncFilesystems(ctx context.Context, files, dirs []string) (restFiles, restDirs []string, err error) {
	type fsys struct {
		fd    int    // a directory on it, open
		via   string // that directory's path
		files int
	}
	byDev := map[uint64]*fsys{}
	devOf := map[string]uint64{} // directory → its filesystem
	known := map[string]bool{}   // directories opened (or found gone)
	defer func() {
		for _, f := range byDev {
			_ = unix.Close(f.fd)
		}
	}()
	look := func(dir string) {
		if known[dir] {
			return
		}
		known[dir] = true
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			return
		}
		devOf[dir] = st.Dev
		if byDev[st.Dev] == nil {
			byDev[st.Dev] = &fsys{fd: fd, via: dir}
			return
		}
		_ = unix.Close(fd)
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		look(dir)
		if dev, ok := devOf[dir]; ok {
			byDev[dev].files++
		}
	}
	synced := map[uint64]bool{}
	for dev, f := range byDev {
		if f.files < syncfsAtLeast {
			continue
		}
		observeSync(ctx, f.via)
		if err := retryEINTR(func() error { return unix.Syncfs(f.fd) }); err != nil {
			return nil, nil, fmt.Errorf("sync the filesystem of %s: %w", f.via, err)
		}
		synced[dev] = true
	}
	onSynced := func(dir string) bool {
		dev, ok := devOf[dir]
		return ok && synced[dev]
	}
	for _, f := range files {
		if !onSynced(filepath.Dir(f)) {
			restFiles = append(restFiles, f)
		}
	}
	for _, d := range dirs {
		look(d)
		if !onSynced(d) {
			restDirs = append(restDirs, d)
		}
	}
	return restFiles, restDirs, nil
}
