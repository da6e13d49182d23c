package graphe2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// Three local nodes and one agent node, whose agent is killed with SIGKILL
// in the middle of a step and started again: the step cut off waits,
// unknown, for a decision; retried, it runs, the execution finishes and no
// step ran twice.
func TestAgentKilledMidRunAndRestarted(t *testing.T) {
	nodes := append(localNodes(), model.Node{ID: "n4", Name: "n4", Roles: []string{"compute"}, Mode: model.NodeAgent})
	// The SDK heartbeats at 80% of the timeout: 6s leaves a loaded machine
	// room while a dead agent is still noticed within seconds.
	h := newHarness(t, harnessOptions{heartbeat: 6 * time.Second}, nodes...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: prepare
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo prepare >> runs.log"}
- id: slow
  type: shell
  roles: ["*"]
  requires: [prepare]
  parameters: {cmd: "touch slow.started; sleep 3; echo slow >> runs.log"}
- id: finish
  type: shell
  roles: ["*"]
  requires: [slow]
  parameters: {cmd: "echo finish >> runs.log"}
`)
	agentRoot := filepath.Join(t.TempDir(), "n4")
	agent := h.startAgent("n4", agentRoot)
	e := h.start(contract.GraphRequest{})

	deadline := time.Now().Add(time.Minute)
	for !exists(filepath.Join(agentRoot, "slow.started")) {
		require.False(t, time.Now().After(deadline), "slow never started on the agent's node")
		time.Sleep(50 * time.Millisecond)
	}
	agent.kill()
	s := h.waitFor(e.ID, "progress", func(*starter.Execution) bool { return true })
	require.False(t, s.Finished(), "the execution finished without its agent: %s", s.Status)
	h.startAgent("n4", agentRoot)
	waiting := h.waitFor(e.ID, "a decision", func(e *starter.Execution) bool { return e.Status == model.ExecWaiting })
	require.Equal(t, model.StatusUnknown, stepStatus(waiting, "slow@n4"))
	h.decide(e.ID, model.DecisionRetry)

	done := h.await(e.ID)
	mustStatus(t, done, model.ExecCompleted)
	roots := map[string]string{"n1": h.root("n1"), "n2": h.root("n2"), "n3": h.root("n3"), "n4": agentRoot}
	for n, root := range roots {
		got := readFile(t, filepath.Join(root, "runs.log"))
		assert.Equal(t, "prepare\nslow\nfinish\n", got, "%s: runs.log = %q, want each step exactly once", n, got)
	}
	var slow *model.StepProgress
	for i := range done.Steps {
		if done.Steps[i].ID == "slow@n4" {
			slow = &done.Steps[i]
		}
	}
	require.NotNil(t, slow, "slow@n4 = %+v, want a second attempt after the agent died", slow)
	require.GreaterOrEqual(t, slow.Attempts, 2, "slow@n4 = %+v, want a second attempt after the agent died", slow)
}

func TestAgentNodeWithoutAgentFailsClearly(t *testing.T) {
	nodes := []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"controller"}},
		{ID: "n5", Name: "n5", Roles: []string{"compute"}, Mode: model.NodeAgent},
	}
	h := newHarness(t, harnessOptions{nodeWait: 2 * time.Second}, nodes...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: hello
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo hello > hello.txt"}
`)
	e := h.run(contract.GraphRequest{})
	mustStatus(t, e, model.ExecFailed)
	require.Contains(t, e.Error, "node n5 has no agent polling", "error %q does not say the node has no agent", e.Error)
	require.True(t, exists(filepath.Join(h.root("n1"), "hello.txt")), "the local node's step did not run")
}
