package upgrade

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-io/cairn/internal/testenv"
)

// commitOf resolves a revision of the module's repository to its commit.
func commitOf(rev string) (string, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return "", err
	}
	out, err := gitOutput(root, "rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %s (the upgrade test needs the repository's history and tags): %w", rev, err)
	}
	return strings.TrimSpace(out), nil
}

// buildAt returns the cairn binary of commit, built once and kept under
// the user's cache directory by commit id (a commit's source never
// changes): its source is extracted with git archive into a temporary
// directory and built there. Without -trimpath the build reuses the
// build cache's compiled dependencies (about 25 s on 2 busy CPUs; a
// cached binary costs nothing). Builds unused for keepBuilds are removed
// when another is built (about 60 MB each).
func buildAt(commit string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	builds := filepath.Join(cache, "cairn", "upgrade")
	dir := filepath.Join(builds, commit)
	bin := filepath.Join(dir, "cairn")
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		return bin, os.Chtimes(bin, now, now)
	}
	pruneBuilds(builds, commit)
	root, err := testenv.ModuleRoot()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src, err := os.MkdirTemp(dir, "src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	archive := exec.Command("git", "archive", "--format=tar", commit)
	archive.Dir = root
	untar := exec.Command("tar", "-x", "-C", src)
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		return "", fmt.Errorf("tar: %w", err)
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return "", fmt.Errorf("git archive %s: %w: %s", commit, err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("extract %s: %w: %s", commit, err, stderr.String())
	}
	// Built beside the binary's final name, then renamed: a run that
	// stops halfway leaves no half-written binary under that name.
	tmp := filepath.Join(src, "cairn.build")
	build := exec.Command("go", "build", "-o", tmp, "./cmd/cairn")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cairn at %s: %w\n%s", commit, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// keepBuilds is how long a cached build of a commit stays unused.
const keepBuilds = 14 * 24 * time.Hour

// pruneBuilds removes the cached builds under dir, but keep's, whose
// binary has not been used for keepBuilds; a directory without a binary
// (a build under way, or one that stopped halfway) goes once it has not
// changed for as long.
func pruneBuilds(dir, keep string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || e.Name() == keep {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, e.Name(), "cairn"))
		if err != nil {
			info, err = os.Stat(filepath.Join(dir, e.Name()))
		}
		if err != nil || time.Since(info.ModTime()) < keepBuilds {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
