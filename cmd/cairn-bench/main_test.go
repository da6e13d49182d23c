package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClearDirEmptiesButKeeps(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "flat-1000", "cairn-files"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flat-1000", "cairn-files", "f000001"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "top"), []byte("y"), 0o644))
	require.NoError(t, clearDir(dir))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a repeated run would find the previous run's files")
}
