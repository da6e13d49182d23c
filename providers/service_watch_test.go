package providers

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// unitsSeen records the units WatchUnits says changed.
type unitsSeen struct {
	mu    sync.Mutex
	units map[string]int
	lost  int
}

func (u *unitsSeen) changed(unit string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.units[unit]++
}

func (u *unitsSeen) count(unit string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.units[unit]
}

// WatchUnits hears of a unit started and stopped behind its back on a
// real systemd manager, and returns when its context ends.
func TestWatchUnitsOnRealSystemd(t *testing.T) {
	f := newServiceFixture(t)
	seen := &unitsSeen{units: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- WatchUnits(ctx, f.sd.Address, seen.changed, func() {
			seen.mu.Lock()
			seen.lost++
			seen.mu.Unlock()
		})
	}()
	// Subscribed once a change is heard: start the unit until one is.
	require.Eventually(t, func() bool {
		// Not f.converge: the condition runs on a goroutine of its own,
		// where a failed require cannot end the test.
		if _, err := f.reg.Converge(context.Background(), Request{Kind: "service", Name: "web", Node: Node{Name: "n"},
			Spec: model.Spec{"name": "cairn-web", "ensure": "running"}}); err != nil {
			t.Logf("converge: %v", err)
		}
		return seen.count("cairn-web.service") > 0
	}, time.Minute, 50*time.Millisecond, "a start heard")

	before := seen.count("cairn-web.service")
	conn, err := serviceProvider{address: f.sd.Address}.connect(ctx)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, runJob(ctx, "cairn-web.service", "stop", conn.StopUnitContext))
	require.Eventually(t, func() bool { return seen.count("cairn-web.service") > before }, time.Minute, 5*time.Millisecond,
		"a stop behind Cairn's back heard")
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("WatchUnits did not return when its context ended")
	}
}

// WatchUnits says why it cannot watch a manager that is not there.
func TestWatchUnitsWithoutAManager(t *testing.T) {
	err := WatchUnits(context.Background(), "unix:path="+t.TempDir()+"/none", func(string) {}, func() {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect to systemd")
}
