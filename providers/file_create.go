package providers

import (
	"context"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// createUnnamed writes data with mode as a new file at loc's target, which
// the caller found absent: the file is made without a name in the
// target's directory (O_TMPFILE), written, and linked in under its name.
// That is one change to the directory instead of the three of a temporary
// file's create and rename (for 100,000 files in one directory, the
// larger part of the kernel's work), and the name never shows a partial
// file: it appears with all its bytes and its mode, or not at all. An
// attempt cut off before the link leaves nothing behind.
//
// made is false, with nothing changed, when it cannot: the filesystem or
// kernel has no O_TMPFILE, /proc is not mounted (the link goes through
// /proc/self/fd, which needs no privilege), or something took the name
// since it was found absent. The caller then writes through a temporary
// file and rename, which also reports why the directory cannot be
// written to. A failure to write or sync the bytes is returned.
func createUnnamed(ctx context.Context, loc fileLocation, data []byte, mode uint32) (made bool, err error) {
	var fd int
	if err := retryEINTR(func() (err error) {
		fd, err = unix.Open(filepath.Dir(loc.target), unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC|unix.O_NOCTTY, 0o600)
		return err
	}); err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	if err := fill(ctx, fd, data, mode, loc.id, loc.target); err != nil {
		return false, err
	}
	// linkat never follows or replaces what is at the new name: a file or
	// symlink planted there since the read fails it with EEXIST.
	if err := retryEINTR(func() error {
		return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, loc.target, unix.AT_SYMLINK_FOLLOW)
	}); err != nil {
		return false, nil
	}
	// A temporary file left by a write through rename that was cut off
	// goes, as that write's next attempt would remove it.
	_ = unix.Unlink(tempPath(loc.target))
	named(ctx, loc.target)
	return true, nil
}
