package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
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
// 0644) the way the file provider creates a file: a temporary file beside
// it (O_EXCL), write, chmod, close, rename; the files and their directory
// synced once per batch. It returns the time the creates and syncs took;
// the caller removes dir.
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

// createBatch creates a batch of files in dir, then syncs them and dir.
func createBatch(dir string, files []fileRes) error {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, f.name)
		tmp := filepath.Join(dir, "."+f.name+".tmp")
		fd, err := syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("create %s: %w", tmp, err)
		}
		_, werr := syscall.Write(fd, []byte(f.content))
		cerr := syscall.Fchmod(fd, 0o644)
		if err := errors.Join(werr, cerr, syscall.Close(fd)); err != nil {
			return fmt.Errorf("write %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, paths[i]); err != nil {
			return err
		}
	}
	for _, p := range append(paths, dir) {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync %s: %w", p, err)
		}
	}
	return nil
}
