package workflows

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Each unit's timeouts fit it: every unit heartbeats with a timeout of
// seconds, so a lost worker is replaced within it; a unit of short steps
// gets a tight start-to-close, a unit of commands the step timeout per
// step; handovers of stopping workers are attempts on top of the step's
// own retries and the crash allowance.
func TestActivityOptionsFitTheUnit(t *testing.T) {
	opts := ExecOptions{ControlQueue: "cairn", StepTimeout: DefaultStepTimeout, HeartbeatTimeout: DefaultHeartbeat, NodeWait: time.Minute}

	files := opts.stepActivityOptions(&contract.Unit{Kind: "file", Count: 100, Batch: true})
	assert.Equal(t, ShortUnitTimeout, files.StartToCloseTimeout)
	assert.Equal(t, 5*time.Second, files.HeartbeatTimeout)
	assert.EqualValues(t, 1+crashAttempts+handoverAttempts, files.RetryPolicy.MaximumAttempts)

	slowFile := opts.stepActivityOptions(&contract.Unit{Kind: "file", Count: 1, Meta: model.Meta{Timeout: "1h"}})
	assert.Equal(t, time.Hour, slowFile.StartToCloseTimeout, "a step's own timeout wins")

	commands := opts.stepActivityOptions(&contract.Unit{Kind: "exec", Count: 3, Batch: true})
	assert.Equal(t, 3*DefaultStepTimeout, commands.StartToCloseTimeout)
	assert.Equal(t, DefaultHeartbeat, commands.HeartbeatTimeout)

	mixed := opts.stepActivityOptions(&contract.Unit{Kind: "", Count: 2, Batch: true})
	assert.Equal(t, 2*DefaultStepTimeout, mixed.StartToCloseTimeout)

	undo := opts.compensationOptions(&contract.Unit{Kind: "exec"})
	assert.Equal(t, DefaultHeartbeat, undo.HeartbeatTimeout)
	assert.EqualValues(t, 3+handoverAttempts, undo.RetryPolicy.MaximumAttempts)

	control := controlOptions("cairn", "prepare apply", 30*time.Minute)
	assert.Equal(t, ControlHeartbeat, control.HeartbeatTimeout)
	assert.LessOrEqual(t, control.HeartbeatTimeout, 10*time.Second, "a lost control activity is noticed in seconds")
}

// TestNodeQueueNames pins the routing function agents rely on: one queue
// per (cluster, node), whatever the ids hold.
func TestNodeQueueNames(t *testing.T) {
	tests := []struct{ cluster, node, want string }{
		{"c1", "n3", "cairn-node-2-c1-n3"},
		{"", "n1", "cairn-node-0--n1"},
		{"a", "b-c", "cairn-node-1-a-b-c"},
		{"a-b", "c", "cairn-node-3-a-b-c"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NodeTaskQueue(tt.cluster, tt.node), "NodeTaskQueue(%q, %q)", tt.cluster, tt.node)
	}
	assert.NotEqual(t, NodeTaskQueue("a", "b-c"), NodeTaskQueue("a-b", "c"))
	// No two pairs of a set of ids built from the separator share a queue.
	ids := []string{"", "-", "a", "a-", "-a", "a-b", "b-c", "c", "1", "1-a", "2-a-b", "a-1"}
	seen := map[string][2]string{}
	for _, c := range ids {
		for _, n := range ids {
			q := NodeTaskQueue(c, n)
			prev, dup := seen[q]
			require.False(t, dup, "cluster %q node %q and cluster %q node %q share queue %q", c, n, prev[0], prev[1], q)
			seen[q] = [2]string{c, n}
		}
	}
	opts := ExecOptions{ControlQueue: "cairn", Cluster: "c1"}
	for _, node := range []string{"", model.ControlPlane} {
		if got := opts.queueFor(node); got != "cairn" {
			t.Errorf("queueFor(%q) = %q", node, got)
		}
	}
}

func TestMetaBecomesRetryPolicy(t *testing.T) {
	opts := ExecOptions{ControlQueue: "cairn", NodeWait: time.Minute, StepTimeout: time.Hour, HeartbeatTimeout: time.Second}
	u := contract.Unit{Node: "n1", Meta: model.Meta{Retry: 3, Delay: "5s", Timeout: "90s"}}
	ao := opts.stepActivityOptions(&u)
	if ao.RetryPolicy.MaximumAttempts != 3+1+crashAttempts+handoverAttempts || ao.RetryPolicy.InitialInterval != 5*time.Second ||
		ao.RetryPolicy.BackoffCoefficient != 1 || ao.StartToCloseTimeout != 90*time.Second ||
		ao.ScheduleToStartTimeout != time.Minute || !slices.Contains(ao.RetryPolicy.NonRetryableErrorTypes, contract.ConfigErrorType) {
		t.Fatalf("options = %+v, policy %+v", ao, ao.RetryPolicy)
	}
	forever := contract.Unit{Meta: model.Meta{Retry: -1}}
	ao = opts.stepActivityOptions(&forever)
	if ao.RetryPolicy.MaximumAttempts != 0 || ao.ScheduleToStartTimeout != 0 || ao.StartToCloseTimeout != time.Hour {
		t.Fatalf("forever options = %+v", ao)
	}
}
