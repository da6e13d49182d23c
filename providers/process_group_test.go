package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// readPid waits for a command to write a pid into path and returns it.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(raw), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "no pid in %s", path)
	return pid
}

// requireGone waits for pid to stop running.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return processGone(pid) }, 10*time.Second, 10*time.Millisecond,
		"process %d still runs after its command was stopped", pid)
}

// A timed-out exec stops its whole process group: a grandchild in the
// background is gone when the step has failed, and the group was asked to
// stop (SIGTERM) before it was killed.
func TestExecTimeoutStopsGrandchildren(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	ch, err := r.Converge(context.Background(), Request{Kind: "exec", Name: "slow", Node: node, Spec: model.Spec{
		"command": "trap 'echo term >> signals; exit 143' TERM; sleep 300 & echo $! > pidfile; sleep 300 & wait",
		"timeout": "1s",
	}})
	require.Error(t, err)
	require.ErrorIs(t, err, errTimeout)
	assert.Equal(t, model.OutcomeFailed, ch.Outcome)
	pid := readPid(t, filepath.Join(node.Root, "pidfile"))
	requireGone(t, pid)
	signals, err := os.ReadFile(filepath.Join(node.Root, "signals"))
	require.NoError(t, err, "the shell was killed without SIGTERM first")
	assert.Equal(t, "term\n", string(signals))
}

// The literal case: a background grandchild and a foreground sleep.
func TestExecTimeoutKillsBackgroundGrandchild(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	_, err := r.Converge(context.Background(), Request{Kind: "exec", Name: "slow", Node: node, Spec: model.Spec{
		"command": "sleep 300 & echo $! > pidfile; sleep 300", "timeout": "1s",
	}})
	require.ErrorIs(t, err, errTimeout)
	requireGone(t, readPid(t, filepath.Join(node.Root, "pidfile")))
}

// Cancelling the step's context stops the group too, and a member that
// ignores SIGTERM is killed once the grace period has passed.
func TestRunCommandCancelKillsMembersIgnoringTerm(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		res commandResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		res, err := runCommand(ctx, command{
			Argv: []string{"/bin/sh", "-c", "(trap '' TERM; exec sleep 300) & echo $! > stubborn; sleep 300"},
			Dir:  dir, KillGrace: 300 * time.Millisecond,
		})
		got <- result{res, err}
	}()
	pid := readPid(t, filepath.Join(dir, "stubborn"))
	// The subshell has set its trap once it has exec'd sleep.
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return err == nil && strings.TrimSpace(string(raw)) == "sleep"
	}, 10*time.Second, 10*time.Millisecond)
	start := time.Now()
	cancel()
	var r result
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("runCommand did not return after cancellation")
	}
	assert.True(t, errors.Is(r.err, context.Canceled), "err %v", r.err)
	assert.Equal(t, -1, r.res.ExitCode)
	requireGone(t, pid)
	assert.Less(t, time.Since(start), 20*time.Second)
}
