package testenv

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tree is every entry below root (root itself as "") with its mode and, for
// regular files, its bytes: what byte-exact rollback tests compare.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		entry := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += " " + string(b)
		}
		out[strings.TrimPrefix(p, root)] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CountLines is the number of lines in the file at path (0 when it does
// not exist): how many times a test command appended its line to a log.
func CountLines(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
