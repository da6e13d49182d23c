package server

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// limiterMetric counts, by GC cycle, when the collector was last held
// back by its CPU limit, which happens when live memory presses against
// the memory limit.
const limiterMetric = "/gc/limiter/last-enabled:gc-cycle"

// watchMemoryLimit logs a warning, at most once an interval, when the
// collector had to be held back because live memory reached the process's
// memory limit (CAIRN_MEMORY_LIMIT or GOMEMLIMIT): the limit is then too
// low for the work and costs CPU. Nothing when no limit is set.
func watchMemoryLimit(ctx context.Context, log *slog.Logger, every time.Duration) {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return
	}
	sample := []metrics.Sample{{Name: limiterMetric}, {Name: "/memory/classes/total:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	last := read()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if cycle := read(); cycle != last {
			last = cycle
			log.Warn("memory limit reached: garbage collection was held back to spare the CPU; raise CAIRN_MEMORY_LIMIT",
				"limit_bytes", limit, "go_memory_bytes", sample[1].Value.Uint64(), "gc_cycle", cycle)
		}
	}
}
