package upgrade

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPruneBuildsRemovesOnlyLongUnusedBuilds: a cached build whose binary
// was not used for keepBuilds goes; a recent one, the one being built,
// and a directory still being filled stay; a stale half-built one goes.
func TestPruneBuildsRemovesOnlyLongUnusedBuilds(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-keepBuilds - time.Hour)
	tests := []struct {
		name   string
		binary bool
		at     time.Time
		keep   bool
	}{
		{"unused", true, old, false},
		{"recent", true, time.Now(), true},
		{"building", false, time.Now(), true},
		{"abandoned", false, old, false},
		{"current", true, old, true},
	}
	for _, tt := range tests {
		d := filepath.Join(dir, tt.name)
		require.NoError(t, os.MkdirAll(d, 0o755))
		if tt.binary {
			bin := filepath.Join(d, "cairn")
			require.NoError(t, os.WriteFile(bin, []byte("bin"), 0o755))
			require.NoError(t, os.Chtimes(bin, tt.at, tt.at))
		}
		require.NoError(t, os.Chtimes(d, tt.at, tt.at))
	}
	pruneBuilds(dir, "current")
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(dir, tt.name))
		assert.Equal(t, tt.keep, err == nil, "%s: kept = %v", tt.name, err == nil)
	}
}
