package server

import (
	"context"

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
// ends, connecting again when the connection fails; what changed while
// it was away is checked once it is back.
func (w *Watcher) units(ctx context.Context) {
	for first := true; ; first = false {
		if !first {
			w.unitsLost()
		}
		err := providers.WatchUnits(ctx, w.o.SystemdAddress, w.unitChanged, w.unitsLost)
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("watch: systemd units", "err", err)
		if !sleep(ctx, watchRetry) {
			return
		}
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
