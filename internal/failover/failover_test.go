package failover

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

func newEnv(t *testing.T, bin string) Env {
	t.Helper()
	dev := testenv.Temporal(t)
	return Env{Bin: bin, Temporal: dev.HostPort, Database: testenv.FreshPostgres(t), Queue: "failover-" + RandomHex(5)}
}

// TestStoppedServerHandsOverInSeconds stops the server running an apply
// with SIGTERM, as a rolling upgrade does, several times to catch a race:
// the server stops polling, lets the command in flight finish, hands the
// rest back, and the other server carries the apply to the end within 2 s:
// never rolled back, every command run once, no attempt counted.
func TestStoppedServerHandsOverInSeconds(t *testing.T) {
	bin := testenv.BuildCairn(t)
	for i := range 5 {
		t.Run(fmt.Sprintf("run-%d", i+1), func(t *testing.T) {
			r := RunFailover(t, newEnv(t, bin), syscall.SIGTERM)
			RequireCompleted(t, r.Exec)
			assert.Zero(t, r.Retried, "a command the drain let finish was left unknown")
			for step := range Commands {
				assert.Equal(t, 1, Counts(r.Lines)[step], "command e%d ran %d times", step, Counts(r.Lines)[step])
			}
			gap := r.Gap(t)
			t.Logf("the chain stood still %s across the stop", gap)
			assert.Less(t, gap, 2*time.Second)
			assert.True(t, r.AExited, "the stopped server did not exit within its drain")
			seen := 0
			for _, s := range r.Exec.Steps {
				if strings.HasPrefix(s.ID, "exec/") {
					seen++
					assert.Equal(t, 1, s.Attempts, "step %s: a handover counted as an attempt", s.ID)
				}
			}
			assert.Equal(t, Commands, seen, "the execution lists every command")
		})
	}
}

// TestKilledServerIsReplacedInSeconds kills the server running an apply
// with SIGKILL: the other server carries on within 10 s (the heartbeat
// timeout and a retry), without a rollback. The command the kill cut off
// (it has no guard) waits, unknown, for a decision, and runs again once
// retried; every other runs once.
func TestKilledServerIsReplacedInSeconds(t *testing.T) {
	r := RunFailover(t, newEnv(t, testenv.BuildCairn(t)), syscall.SIGKILL)
	RequireCompleted(t, r.Exec)
	twice := 0
	for step := range Commands {
		n := Counts(r.Lines)[step]
		require.GreaterOrEqual(t, n, 1, "command e%d never ran", step)
		require.LessOrEqual(t, n, 2, "command e%d ran %d times", step, n)
		if n == 2 {
			twice++
		}
	}
	assert.LessOrEqual(t, twice, 1, "more than the command cut off ran twice")
	assert.LessOrEqual(t, r.Retried, 1, "more than the command cut off was unknown")
	gap := r.Gap(t)
	t.Logf("the chain stood still %s across the kill", gap)
	assert.Less(t, gap, 10*time.Second)
}
