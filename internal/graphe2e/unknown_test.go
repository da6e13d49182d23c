package graphe2e

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// heldOutcome is a store whose first write of one step's outputs (its
// outcome) never completes: it waits until the writer goes away. An agent
// killed meanwhile has run the step without its outcome being recorded.
type heldOutcome struct {
	store.Store
	step    string
	mu      sync.Mutex
	held    bool
	reached chan struct{}
}

func (s *heldOutcome) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	if _, ok := data[s.step]; ok && kind == contract.DataOutputs {
		s.mu.Lock()
		first := !s.held
		s.held = true
		s.mu.Unlock()
		if first {
			close(s.reached)
			<-ctx.Done()
			return ctx.Err()
		}
	}
	return s.Store.PutStepDataBatch(ctx, execID, kind, data)
}

// A graph step on an agent's node whose agent is killed between the
// command's exit and the record of its outcome is unknown: the agent that
// comes back does not run it again; the execution waits for a decision,
// and says why in its progress and in the Temporal UI. Retried, the
// command runs once more; skipped, it is taken as done and does not.
func TestAgentKilledBeforeTheOutcomeWasRecordedWaits(t *testing.T) {
	tests := []struct {
		decision model.Decision
		wantLog  string
	}{
		{decision: model.DecisionRetry, wantLog: "ran\nran\nfinish\n"},
		{decision: model.DecisionSkip, wantLog: "ran\nfinish\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.decision), func(t *testing.T) {
			held := &heldOutcome{step: "migrate@n4", reached: make(chan struct{})}
			h := newHarness(t, harnessOptions{heartbeat: 6 * time.Second, wrap: func(st store.Store) store.Store {
				held.Store = st
				return held
			}}, model.Node{ID: "n4", Name: "n4", Roles: []string{"db"}, Mode: model.NodeAgent})
			h.putGraph(model.LayerRelease, "rel", "default", `
- id: migrate
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo ran >> runs.log"}
- id: finish
  type: shell
  roles: ["*"]
  requires: [migrate]
  parameters: {cmd: "echo finish >> runs.log"}
`)
			root := filepath.Join(t.TempDir(), "n4")
			agent := h.startAgent("n4", root)
			e := h.start(contract.GraphRequest{})
			select {
			case <-held.reached:
			case <-time.After(2 * time.Minute):
				t.Fatal("the step's outcome was never recorded")
			}
			require.Equal(t, "ran\n", readFile(t, filepath.Join(root, "runs.log")))
			agent.kill()
			h.startAgent("n4", root)

			waiting := h.waitFor(e.ID, "a decision", func(e *starter.Execution) bool { return e.Status == model.ExecWaiting })
			assert.Equal(t, model.StatusUnknown, stepStatus(waiting, "migrate@n4"))
			assert.Contains(t, h.currentDetails(waiting), "migrate@n4 (unknown: the command may or may not have run)")
			assert.Equal(t, "ran\n", readFile(t, filepath.Join(root, "runs.log")), "run again without a decision")

			h.decide(e.ID, tt.decision)
			done := h.await(e.ID)
			mustStatus(t, done, model.ExecCompleted)
			assert.Equal(t, tt.wantLog, readFile(t, filepath.Join(root, "runs.log")))
		})
	}
}
