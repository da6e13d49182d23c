package config

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
)

// DefaultMemoryLimit is CAIRN_MEMORY_LIMIT's default. Go's collector lets
// the heap grow to twice what was live after the last collection, so a
// burst (expanding a graph of 50,000 steps, writing its plan) takes the
// process to twice its live memory and keeps it there until the
// scavenger hands pages back. Near this limit the collector runs sooner
// and the scavenger at once. A server whose live memory needs more (it
// logs "memory limit reached" when collections are held back by the
// limit) should be given more.
const DefaultMemoryLimit = "340MiB"

// minMemoryLimit is the smallest limit accepted: below it the server
// would spend its time collecting.
const minMemoryLimit = 64 << 20

// parseMemoryLimit reads CAIRN_MEMORY_LIMIT: a size, or off.
func parseMemoryLimit(s string) (int64, error) {
	if v := strings.ToLower(strings.TrimSpace(s)); v == "off" || v == "0" || v == "none" {
		return 0, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("want a size such as 400MiB, or off: %w", err)
	}
	if n < minMemoryLimit {
		return 0, fmt.Errorf("want at least 64MiB, or off, got %q", s)
	}
	return n, nil
}

// ApplyMemoryLimit sets the process's soft memory limit to c.MemoryLimit,
// unless GOMEMLIMIT set one (the runtime applied it at start) or the
// limit is off. It returns the limit in force (math.MaxInt64: none).
func ApplyMemoryLimit(c *Config, log *slog.Logger) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		limit := debug.SetMemoryLimit(-1)
		log.Info("memory limit from GOMEMLIMIT", "bytes", limit)
		return limit
	}
	if c.MemoryLimit <= 0 {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(c.MemoryLimit)
	return c.MemoryLimit
}
