package providers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
)

// fuelRegistry holds the providers of Fuel's task types.
func fuelRegistry(hooks map[string]string) *Registry {
	reg := NewRegistry(kinds.Builtin())
	for _, p := range LocalProviders() {
		reg.Register(p)
	}
	reg.Register(NewHook(hooks))
	return reg
}

// writeTree creates files (relative path → content) under root with mode.
func writeTree(t *testing.T, root string, files map[string]string, mode os.FileMode) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
		require.NoError(t, os.Chmod(p, mode))
	}
}

// readTree lists the regular files under root: relative path → content.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel] = string(b)
		}
		return nil
	}))
	return out
}
