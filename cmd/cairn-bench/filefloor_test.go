package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFileFloorCreatesEveryFile: the floor creates the shape's files, all
// of them with their contents and mode, and leaves no temporary file.
func TestFileFloorCreatesEveryFile(t *testing.T) {
	fs, err := genFiles(shapeGroups, "unused", 250)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "floor")
	d, err := fileFloor(context.Background(), dir, fs)
	require.NoError(t, err)
	require.Positive(t, d)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 250, "files in the floor's directory")
	for _, f := range fs.files {
		got, err := os.ReadFile(filepath.Join(dir, f.name))
		require.NoError(t, err)
		require.Equal(t, f.content, string(got))
		fi, err := os.Stat(filepath.Join(dir, f.name))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	}
}
