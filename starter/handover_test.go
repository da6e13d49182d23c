package starter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// A worker stopped (SIGTERM) while a command runs past its drain cuts the
// command off and hands the step back: it exits within the drain instead
// of waiting for the command, and the step is neither failed nor rolled
// back nor counted as an attempt. A command declared safe to repeat runs
// to the end on the next worker; one that is not did part of its work, or
// all: it waits, unknown, for a decision, and runs again once retried.
func TestStoppedWorkerHandsBackAStepPastItsDrain(t *testing.T) {
	tests := []struct {
		name      string
		meta      string
		unknown   bool
		wantTries int
	}{
		{name: "safe to repeat", meta: "meta: {idempotent: true}", wantTries: 1},
		{name: "not safe to repeat", unknown: true, wantTries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{noWorker: true})
			root := t.TempDir()
			docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: first}
spec: {path: %[1]s/first, content: "1"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: slow}
spec: {command: "echo started >> %[1]s/started; sleep 4; echo ran >> %[1]s/ran"}
dependsOn: [File/first]
%[2]s
`, root, tt.meta)
			s := h.stack("handover")
			first := h.workerProcess(t, workerDrainEnv+"=300ms")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs)})
			require.NoError(t, err)
			waitFor(t, func() bool { _, err := os.Stat(filepath.Join(root, "started")); return err == nil })

			stopAt := time.Now()
			require.NoError(t, first.Process.Signal(syscall.SIGTERM))
			_ = first.Wait()
			assert.Less(t, time.Since(stopAt), 4*time.Second, "the worker waited for the command instead of handing it back")
			_, err = os.Stat(filepath.Join(root, "ran"))
			require.True(t, os.IsNotExist(err), "the command finished before the stop: the test proves nothing")

			h.workerProcess(t)
			if tt.unknown {
				var waiting *starter.Execution
				waitForLong(t, func() bool {
					waiting, err = h.starter.Describe(ctx, e.ID)
					return err == nil && waiting.Status == model.ExecWaiting
				})
				b, err := os.ReadFile(filepath.Join(root, "started"))
				require.NoError(t, err)
				require.Equal(t, "started\n", string(b), "the command cut off ran again without a decision")
				_, err = h.starter.Decide(ctx, e.ID, model.DecisionRequest{Action: model.DecisionRetry, Step: "exec/slow"})
				require.NoError(t, err)
			}
			done, err := h.starter.Await(ctx, e.ID)
			require.NoError(t, err)
			mustStatus(t, done, model.ExecCompleted)
			wantReport(t, done.Report, model.Report{Created: 1, Updated: 1})
			b, err := os.ReadFile(filepath.Join(root, "ran"))
			require.NoError(t, err)
			assert.Equal(t, "ran\n", string(b), "the command ran to its end once")
			b, err = os.ReadFile(filepath.Join(root, "started"))
			require.NoError(t, err)
			assert.Equal(t, "started\nstarted\n", string(b), "the command cut off ran again")
			// With a decision, the unit's run that left the step unknown
			// and its retry count; the handover does not.
			for _, st := range done.Steps {
				assert.Equal(t, tt.wantTries, st.Attempts, "step %s: the handover counted as an attempt", st.ID)
			}
		})
	}
}
