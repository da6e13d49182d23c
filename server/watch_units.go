package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/cairn-io/cairn/providers"
)

// followUnits follows systemd's signals while service resources are
// watched here, and stops when none are. Under w.mu.
func (w *Watcher) followUnits(ctx context.Context) {
	switch {
	case len(w.byUnit) > 0 && w.stopUnits == nil:
		uctx, stop := context.WithCancel(ctx)
		w.stopUnits = stop
		go w.units(uctx)
	case len(w.byUnit) == 0 && w.stopUnits != nil:
		w.stopUnits()
		w.stopUnits = nil
	}
}

// units watches the units of the manager at SystemdAddress until ctx
// ends (followUnitsOf).
func (w *Watcher) units(ctx context.Context) {
	followUnitsOf(ctx, w.o.SystemdAddress, w.unitChanged, w.unitsLost, w.log)
}

// unitsRetryMax bounds the wait between two attempts to reach a systemd
// manager that cannot be reached.
const unitsRetryMax = 30 * time.Second

// followUnitsOf follows the units of the manager at address until ctx
// ends, connecting again when the connection fails or drops, after a
// wait that doubles from watchRetry up to unitsRetryMax while attempts
// keep failing (a host without the manager costs a log line now and
// then, not one a second); what changed while it was away is reported
// as lost once it is back.
func followUnitsOf(ctx context.Context, address string, changed func(string), lost func(), log *slog.Logger) {
	wait := watchRetry
	for first := true; ; first = false {
		if !first {
			lost()
		}
		t0 := time.Now()
		err := providers.WatchUnits(ctx, address, changed, lost)
		if ctx.Err() != nil {
			return
		}
		if time.Since(t0) > unitsRetryMax {
			wait = watchRetry // it was up a while: a new failure
		}
		log.Warn("watch: systemd units", "err", err, "retry", wait)
		if !sleep(ctx, wait) {
			return
		}
		wait = min(2*wait, unitsRetryMax)
	}
}

// unitChanged marks the service resources of unit as changed.
func (w *Watcher) unitChanged(unit string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.byUnit[unit] {
		o.stack.pending[o.key] = true
		o.stack.signal()
	}
}

// unitsLost marks every watched service resource as changed.
func (w *Watcher) unitsLost() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, owners := range w.byUnit {
		for _, o := range owners {
			o.stack.pending[o.key] = true
			o.stack.signal()
		}
	}
}
