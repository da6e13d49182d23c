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

// Each command of a chain takes a while, so a fault lands in the middle
// of one, and the chain lasts through the faults: through the 10 s a
// history host that comes back waits before it takes its shards
// (history.startupMembershipJoinDelay) too.
const (
	applySleep = "0.3"
	graphSleep = "0.3"
)

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
// command's run and its dispatch).
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
// it), and returns the time from at to that line. The stall is measured,
// not bounded: on a loaded machine Temporal's recovery varies too much
// for a bound near the 10 s it is meant to keep (docs/operating.md); the
// wait gives up after three minutes.
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
	// measure runs fault, which returns when the fault happened (the
	// moment it started, unless it says otherwise).
	measure := func(name string, fault func(start time.Time) (time.Time, error)) {
		t.Helper()
		start := time.Now()
		at, err := fault(start)
		require.NoError(t, err, name)
		took := time.Since(start)
		d := c.resumed(t, at)
		t.Logf("%s: the chain stood still %s (the fault itself took %s)", name, d.Round(time.Millisecond), took.Round(time.Millisecond))
		stalls = append(stalls, stall{name, d})
	}
	host, err := c.cluster.HistoryHostOf(ctx, c.workflowID)
	require.NoError(t, err)
	measure("history host killed ("+host+")", func(start time.Time) (time.Time, error) {
		return start, c.cluster.Kill(host, syscall.SIGKILL)
	})
	// An apply's chain may move on before Temporal noticed; the host comes
	// back once its shard did move.
	for _, h := range c.cluster.Hosts {
		if h.Service == "history" && h.Name != host {
			c.shardMovedTo(ctx, t, h.Name)
		}
	}
	// The host joins the ring a while after it serves
	// (history.startupMembershipJoinDelay); the fault is its taking the
	// shard back.
	measure("history host back ("+host+")", func(time.Time) (time.Time, error) {
		if err := c.cluster.Start(ctx, host); err != nil {
			return time.Time{}, err
		}
		return c.shardMovedTo(ctx, t, host), nil
	})
	measure("matching restarted", func(start time.Time) (time.Time, error) {
		return start, c.cluster.Restart(ctx, "matching")
	})
	measure("frontend restarted", func(start time.Time) (time.Time, error) {
		return start, c.cluster.Restart(ctx, "frontend")
	})
	return stalls
}

// shardMovedTo waits until host owns the shard of the chain's workflow
// and returns when it was seen taking it.
func (c chain) shardMovedTo(ctx context.Context, t *testing.T, host string) time.Time {
	t.Helper()
	var at time.Time
	require.Eventually(t, func() bool {
		owner, err := c.cluster.HistoryHostOf(ctx, c.workflowID)
		if err == nil && owner == host {
			at = time.Now()
		}
		return !at.IsZero()
	}, 2*time.Minute, 20*time.Millisecond, "%s did not take its shard back", host)
	return at
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

// chainCommand is a command of a chain: it sleeps for sleep seconds and
// appends "eSTEP WHO NANOSECONDS" to path.
func chainCommand(step int, sleep, who, path string) string {
	return fmt.Sprintf(`sleep %s; echo "e%d %s $(date +%%s%%N)" >> %s`, sleep, step, who, path)
}

// logStalls records a run's stalls in the test's log, slowest first.
func logStalls(t *testing.T, what string, stalls []stall) {
	slices.SortFunc(stalls, func(a, b stall) int { return int(b.d - a.d) })
	for _, s := range stalls {
		t.Logf("stall %s, %s: %s", what, s.fault, s.d.Round(time.Millisecond))
	}
}
