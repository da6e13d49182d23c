package starter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// A worker killed after a command exited and before its outcome was
// recorded leaves the command's outcome unknown: the next worker does not
// run it again but pauses the apply on it, whatever the failure policy
// (here rollback), saying so. Retried, it runs once more; skipped, it is
// taken as done and never runs again. Either way the apply completes.
func TestCommandKilledBeforeItsOutcomeWasRecordedWaits(t *testing.T) {
	tests := []struct {
		decision    model.Decision
		wantRuns    string
		wantSummary string
	}{
		{decision: model.DecisionRetry, wantRuns: "ran\nran\n", wantSummary: "(exec/migrate run again: its outcome was unknown)"},
		{decision: model.DecisionSkip, wantRuns: "ran\n", wantSummary: "(exec/migrate taken as done: its outcome was unknown)"},
	}
	for _, tt := range tests {
		t.Run(string(tt.decision), func(t *testing.T) {
			h := newHarness(t, harnessOptions{noWorker: true})
			root := t.TempDir()
			runs := filepath.Join(root, "runs.log")
			docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: Exec
metadata: {name: migrate}
spec: {command: "echo ran >> %[1]s/runs.log"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: after}
spec: {path: %[1]s/after, content: "done"}
dependsOn: [Exec/migrate]
`, root)
			s := h.stack("unknown-" + string(tt.decision))
			// The outcome's record waits far longer than the test: the
			// kill lands inside the window, every time.
			first := h.workerProcess(t, workerOutcomeDelayEnv+"=10m")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs), OnFailure: model.OnFailureRollback})
			require.NoError(t, err)
			waitFor(t, func() bool { b, _ := os.ReadFile(runs); return string(b) == "ran\n" })
			require.NoError(t, first.Process.Kill())
			_ = first.Wait()

			h.workerProcess(t)
			var waiting *starter.Execution
			waitForLong(t, func() bool {
				waiting, err = h.starter.Describe(ctx, e.ID)
				return err == nil && waiting.Status == model.ExecWaiting
			})
			assert.Equal(t, "decision", waiting.Awaiting)
			i := slices.IndexFunc(waiting.Steps, func(sp model.StepProgress) bool { return sp.ID == "exec/migrate" })
			require.GreaterOrEqual(t, i, 0, "steps: %+v", waiting.Steps)
			step := waiting.Steps[i]
			assert.Equal(t, model.StatusUnknown, step.Status)
			assert.True(t, strings.HasPrefix(step.Error, "unknown: the command may or may not have run"), "error %q", step.Error)
			b, err := os.ReadFile(runs)
			require.NoError(t, err)
			require.Equal(t, "ran\n", string(b), "the command ran again without a decision")
			require.NoFileExists(t, filepath.Join(root, "after"), "its dependent ran")

			res, err := h.starter.Decide(ctx, e.ID, model.DecisionRequest{Action: tt.decision})
			require.NoError(t, err)
			assert.Equal(t, "exec/migrate", res.Step)
			done, err := h.starter.Await(ctx, e.ID)
			require.NoError(t, err)
			mustStatus(t, done, model.ExecCompleted)
			wantReport(t, done.Report, model.Report{Created: 1, Updated: 1})
			b, err = os.ReadFile(runs)
			require.NoError(t, err)
			assert.Equal(t, tt.wantRuns, string(b))
			assert.FileExists(t, filepath.Join(root, "after"))
			assert.Len(t, h.getStack(s.ID).Resources, 2)
			assert.True(t, historyHolds(t, h, done, tt.wantSummary), "the Temporal UI's summary of the activity after the decision")
		})
	}
}

// waitForLong is waitFor with room for a dead worker's heartbeat timeout
// and the retry on a loaded machine.
func waitForLong(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		require.False(t, time.Now().After(deadline), "condition not met in 2 minutes")
		time.Sleep(100 * time.Millisecond)
	}
}
