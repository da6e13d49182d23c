package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// File floor: what this disk takes to create a file shape's files durably
// with nothing of Cairn around it, written beside each create.
const (
	// floorBatch files are created, then synced together (each file, then
	// their directory), as the file provider's deferred sync does for the
	// steps of one unit.
	floorBatch = 100
	// floorParallel batches are written at once: the units one execution
	// runs at once by default (CAIRN_PARALLELISM).
	floorParallel = 10
)

// fileFloor creates fs's files under dir (their names, contents and mode
// 0644) the way the file provider creates a new file: made unnamed in
// the directory (O_TMPFILE), written, chmod, linked in under its name (a
// temporary file and rename where the system has no O_TMPFILE); the
// batch's filesystem synced once, as a unit of that many files is. It
// returns the time the creates and syncs took; the caller removes dir.
func fileFloor(ctx context.Context, dir string, fs *fileSet) (time.Duration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	batches := make(chan []fileRes)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	t0 := time.Now()
	for range floorParallel {
		wg.Go(func() {
			for b := range batches {
				if err := createBatch(dir, b); err != nil {
					fail(err)
				}
			}
		})
	}
	for start := 0; start < len(fs.files) && ctx.Err() == nil; start += floorBatch {
		batches <- fs.files[start:min(start+floorBatch, len(fs.files))]
	}
	close(batches)
	wg.Wait()
	d := time.Since(t0)
	if err := errors.Join(firstErr, ctx.Err()); err != nil {
		return 0, err
	}
	return d, nil
}

// createBatch creates a batch of files in dir, then syncs dir's
// filesystem.
func createBatch(dir string, files []fileRes) error {
	for _, f := range files {
		if err := createFile(dir, f); err != nil {
			return err
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("sync the filesystem of %s: %w", dir, err)
	}
	return nil
}

// createFile creates one file of the floor in dir.
func createFile(dir string, f fileRes) error {
	path := filepath.Join(dir, f.name)
	fd, err := unix.Open(dir, unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	unnamed := err == nil
	tmp := filepath.Join(dir, "."+f.name+".tmp")
	if !unnamed {
		if fd, err = unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600); err != nil {
			return fmt.Errorf("create %s: %w", tmp, err)
		}
	}
	_, werr := unix.Write(fd, []byte(f.content))
	cerr := unix.Fchmod(fd, 0o644)
	if unnamed && werr == nil && cerr == nil {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	}
	if err := errors.Join(werr, cerr, err, unix.Close(fd)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !unnamed {
		return os.Rename(tmp, path)
	}
	return nil
}
