package config

import (
	"log/slog"
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemoryLimitSetting(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"", 340 << 20, ""}, // the default
		{"1GiB", 1 << 30, ""},
		{"off", 0, ""},
		{"0", 0, ""},
		{"10MiB", 0, "at least 64MiB"},
		{"plenty", 0, "want a size"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			env := map[string]string{"CAIRN_MEMORY_LIMIT": tt.in}
			c, err := Load(Values(func(k string) string { return env[k] }))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, "CAIRN_MEMORY_LIMIT")
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, c.MemoryLimit)
		})
	}
}

// TestApplyMemoryLimit sets the runtime's limit, leaves it alone when
// GOMEMLIMIT set one, and sets none when off.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.DiscardHandler)

	t.Setenv("GOMEMLIMIT", "")
	require.Equal(t, int64(300<<20), ApplyMemoryLimit(&Config{MemoryLimit: 300 << 20}, log))
	require.Equal(t, int64(300<<20), debug.SetMemoryLimit(-1))

	debug.SetMemoryLimit(math.MaxInt64)
	require.Equal(t, int64(math.MaxInt64), ApplyMemoryLimit(&Config{}, log), "off sets none")

	t.Setenv("GOMEMLIMIT", "700MiB")
	debug.SetMemoryLimit(700 << 20) // what the runtime did at start
	require.Equal(t, int64(700<<20), ApplyMemoryLimit(&Config{MemoryLimit: 300 << 20}, log), "GOMEMLIMIT wins")
	require.Equal(t, int64(700<<20), debug.SetMemoryLimit(-1))
}
