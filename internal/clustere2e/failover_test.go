package clustere2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/internal/failover"
	"github.com/cairn-io/cairn/internal/testenv"
)

// The two-server failover of internal/failover on the production
// topology: the server running an apply stops (SIGTERM) and the other
// carries the apply to its end, every command run once, no handover
// counted as an attempt.
func TestStoppedServerHandsOverOnTheCluster(t *testing.T) {
	cluster := testenv.TemporalCluster(t)
	env := failover.Env{Bin: testenv.BuildCairn(t), Temporal: cluster.HostPort,
		Database: testenv.FreshPostgres(t), Queue: "cluster-failover-" + failover.RandomHex(5)}
	r := failover.RunFailover(t, env, syscall.SIGTERM)
	failover.RequireCompleted(t, r.Exec)
	assert.Zero(t, r.Retried, "a command the drain let finish was left unknown")
	counts := failover.Counts(r.Lines)
	for step := range failover.Commands {
		assert.Equal(t, 1, counts[step], "command e%d ran %d times", step, counts[step])
	}
	for _, s := range r.Exec.Steps {
		if strings.HasPrefix(s.ID, "exec/") {
			assert.Equal(t, 1, s.Attempts, "step %s: a handover counted as an attempt", s.ID)
		}
	}
	gap := r.Gap(t)
	t.Logf("the chain stood still %s across the stop", gap)
	assert.Less(t, gap, 10*time.Second)
	assert.True(t, r.AExited, "the stopped server did not exit within its drain")
}
