package providers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
)

func TestKillGraceFor(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		by   func() time.Time
		want func(time.Duration) bool
	}{
		{"no bound", nil, func(g time.Duration) bool { return g == killGrace }},
		{"bound after the grace", func() time.Time { return now.Add(time.Hour) }, func(g time.Duration) bool { return g == killGrace }},
		{"bound before the grace", func() time.Time { return now.Add(2 * time.Second) }, func(g time.Duration) bool { return g > 0 && g <= 2*time.Second }},
		{"bound passed", func() time.Time { return now.Add(-time.Second) }, func(g time.Duration) bool { return g == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := killGraceFor(WithKillBy(context.Background(), tc.by), killGrace)
			assert.True(t, tc.want(g), "grace %s", g)
		})
	}
}

// A command that ignores SIGTERM is killed by its kill-by time, not after
// the full grace; one whose attempt lost ownership is killed at once.
func TestCommandKilledByItsBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		by    time.Duration // kill-by after the cancel; 0: none
		cause error
	}{
		{name: "kill-by", by: 300 * time.Millisecond, cause: contract.ErrWorkerStopping},
		{name: "lost ownership", cause: contract.ErrLostOwnership},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancelCause(context.Background())
			var cancelAt time.Time
			if tc.by > 0 {
				ctx = WithKillBy(ctx, func() time.Time { return cancelAt.Add(tc.by) })
			}
			done := make(chan error, 1)
			go func() {
				_, err := runCommand(ctx, command{Argv: []string{"sh", "-c", "trap '' TERM; echo $$ > pid; sleep 30"}, Dir: dir})
				done <- err
			}()
			pid := readPid(t, dir+"/pid")
			cancelAt = time.Now()
			cancel(tc.cause)
			select {
			case err := <-done:
				require.ErrorIs(t, err, tc.cause)
			case <-time.After(killGrace - time.Second):
				t.Fatal("the command was given its full grace")
			}
			requireGone(t, pid)
		})
	}
}
