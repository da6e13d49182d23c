package prepare

import "sync/atomic"

// counters count the work a Preparer does, for /metrics and for tests
// that hold a request to one merge and one expansion per graph type.
type counters struct {
	merges     atomic.Int64
	expansions atomic.Int64
}

// Merges is how many times graph layers were merged (graphs.Merge).
func (c *counters) Merges() int64 { return c.merges.Load() }

// Expansions is how many times a graph was expanded onto nodes
// (graphs.Expand).
func (c *counters) Expansions() int64 { return c.expansions.Load() }
