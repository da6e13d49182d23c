package providers

import (
	"context"
	"errors"
	"fmt"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// unitUpdates is how many unit updates WatchUnits buffers before it says
// some were lost.
const unitUpdates = 1024

// unitWatchPing is how often WatchUnits checks its connection is still
// up (a manager restarting or re-executing drops it).
const unitWatchPing = 2 * time.Second

// WatchUnits follows the systemd manager at address (as NewService's)
// over D-Bus: it subscribes to the manager's signals and calls changed
// with the unit's name ("nginx.service") each time one of a unit's states
// changes (PropertiesChanged on the unit: it started, stopped, failed,
// reloaded), and lost when updates were dropped (any unit may have
// changed). It returns when ctx ends (nil) or the connection fails or
// drops (the error): a caller that keeps watching connects again, and
// treats that as lost too. changed and lost run on one goroutine, one at
// a time, and must not block. Memory: a buffer of 1,024 updates.
func WatchUnits(ctx context.Context, address string, changed func(unit string), lost func()) error {
	conn, err := serviceProvider{address: address}.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	updates := make(chan *sddbus.PropertiesUpdate, unitUpdates)
	errs := make(chan error, 16)
	conn.SetPropertiesSubscriber(updates, errs)
	if err := conn.Subscribe(); err != nil {
		return fmt.Errorf("subscribe to systemd's signals: %w", err)
	}
	ping := time.NewTicker(unitWatchPing)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case u := <-updates:
			if u.UnitName != "" {
				changed(u.UnitName)
			}
		case <-errs:
			// The only error a properties subscriber is sent: its
			// buffer was full.
			lost()
		case <-ping.C:
			if !conn.Connected() {
				return errors.New("the connection to systemd dropped")
			}
		}
	}
}
