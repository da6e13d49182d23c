package clustere2e

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/failover"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// maxStall bounds how long a fault of Temporal may hold an execution up:
// twice the 10 s the topology is meant to keep, since on a loaded 2-CPU
// machine a matching restart (its stop, its start, the SDK's pollers
// backing off) or a killed history host (membership noticing, shards
// moving) measured up to 8.3 s; docs/operating.md has the figures.
const maxStall = 20 * time.Second

// stepSleep is how long each command of a chain takes, so a fault lands
// in the middle of one.
const stepSleep = "0.1"

// chain is an execution running a chain of commands, each appending a
// line (failover.Line) to path when it ends.
type chain struct {
	cluster    *testenv.Cluster
	path       string
	total      int
	workflowID string
}

// stall is how long one fault held a chain up: from the fault until a
// command that Temporal dispatched after it had run (so it includes one
// command's run, stepSleep and its dispatch).
type stall struct {
	fault string
	d     time.Duration
}

func (c chain) lines(t *testing.T) []failover.Line { return failover.ReadLines(t, c.path) }

// waitLines waits until n commands have run.
func (c chain) waitLines(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(c.lines(t)) >= n }, 2*time.Minute, 10*time.Millisecond,
		"fewer than %d commands ran", n)
}

// resumed waits for the chain to move on after a fault at at: for a line
// of a command at least two after the last one that had ended at at (the
// one in flight may end on its own, the next needs Temporal to dispatch
// it), and returns the time from at to that line.
func (c chain) resumed(t *testing.T, at time.Time) time.Duration {
	t.Helper()
	last := -1
	for _, l := range c.lines(t) {
		if !l.At.After(at) {
			last = max(last, l.Step)
		}
	}
	require.Less(t, last+2, c.total, "the chain was at its end at the fault: the test proves nothing")
	var when time.Time
	require.Eventually(t, func() bool {
		for _, l := range c.lines(t) {
			if l.Step >= last+2 {
				when = l.At
				return true
			}
		}
		return false
	}, 3*time.Minute, 10*time.Millisecond, "the chain did not move on after the fault at %s", at.Format(time.RFC3339Nano))
	return when.Sub(at)
}

// injectFaults hits Temporal under the running chain, one fault after
// the other, each once the chain moved on from the one before: the
// history host owning the execution's shard is killed (SIGKILL; its
// shards move to the other host) and, once the chain moved on, started
// again (the shards come back); matching restarts; the frontend
// restarts.
func (c chain) injectFaults(ctx context.Context, t *testing.T) []stall {
	t.Helper()
	c.waitLines(t, 3)
	var stalls []stall
	measure := func(name string, fault func() error) {
		t.Helper()
		at := time.Now()
		require.NoError(t, fault(), name)
		took := time.Since(at)
		d := c.resumed(t, at)
		t.Logf("%s: the chain stood still %s (the fault itself took %s)", name, d.Round(time.Millisecond), took.Round(time.Millisecond))
		assert.LessOrEqual(t, d, maxStall, "%s: the stall", name)
		stalls = append(stalls, stall{name, d})
	}
	host, err := c.cluster.HistoryHostOf(ctx, c.workflowID)
	require.NoError(t, err)
	measure("history host killed ("+host+")", func() error { return c.cluster.Kill(host, syscall.SIGKILL) })
	measure("history host back ("+host+")", func() error { return c.cluster.Start(ctx, host) })
	measure("matching restarted", func() error { return c.cluster.Restart(ctx, "matching") })
	measure("frontend restarted", func() error { return c.cluster.Restart(ctx, "frontend") })
	return stalls
}

// requireOnce fails t unless every command of the chain ran exactly once.
func (c chain) requireOnce(t *testing.T) {
	t.Helper()
	counts := failover.Counts(c.lines(t))
	for step := range c.total {
		assert.Equal(t, 1, counts[step], "command e%d ran %d times", step, counts[step])
	}
}

// requireNoStepFailed fails t unless e completed with every step
// succeeded and none failed or rolled back: a fault of Temporal is no
// failure of a step. A step whose attempt lost contact with Temporal
// during the fault and was handed back (or whose heartbeat timed out
// while its shard moved) shows a second attempt; those are logged.
func requireNoStepFailed(t *testing.T, e *model.Execution, steps int) {
	t.Helper()
	require.Equal(t, model.ExecCompleted, e.Status, "execution %s: %s", e.ID, e.Error)
	if e.Report != nil {
		assert.Zero(t, e.Report.Failed, "failed steps")
		assert.False(t, e.Report.RolledBack, "rolled back")
	}
	require.GreaterOrEqual(t, len(e.Steps), steps, "steps reported")
	again := 0
	for _, s := range e.Steps {
		assert.Equal(t, model.StatusSucceeded, s.Status, "step %s: %s", s.ID, s.Error)
		assert.Empty(t, s.Error, "step %s", s.ID)
		if s.Attempts > 1 {
			again++
		}
	}
	if again > 0 {
		t.Logf("%d of %d steps ran in a second attempt of their unit (handed back during a fault; none ran twice)", again, len(e.Steps))
	}
}

// chainCommand is a command of a chain: it takes stepSleep and appends
// "eSTEP WHO NANOSECONDS" to path.
func chainCommand(step int, who, path string) string {
	return fmt.Sprintf(`sleep %s; echo "e%d %s $(date +%%s%%N)" >> %s`, stepSleep, step, who, path)
}

// logStalls records a run's stalls in the test's log, slowest first.
func logStalls(t *testing.T, what string, stalls []stall) {
	slices.SortFunc(stalls, func(a, b stall) int { return int(b.d - a.d) })
	for _, s := range stalls {
		t.Logf("stall %s, %s: %s", what, s.fault, s.d.Round(time.Millisecond))
	}
}
