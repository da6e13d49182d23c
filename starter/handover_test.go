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
// of waiting for the command, the step is neither failed nor rolled back
// nor counted as an attempt, and the next worker runs it to the end.
func TestStoppedWorkerHandsBackAStepPastItsDrain(t *testing.T) {
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
`, root)
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
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	wantReport(t, done.Report, model.Report{Created: 1, Updated: 1})
	b, err := os.ReadFile(filepath.Join(root, "ran"))
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(b), "the command ran to its end once")
	b, err = os.ReadFile(filepath.Join(root, "started"))
	require.NoError(t, err)
	assert.Equal(t, "started\nstarted\n", string(b), "the command cut off ran again on the next worker")
	for _, st := range done.Steps {
		assert.Equal(t, 1, st.Attempts, "step %s: the handover counted as an attempt", st.ID)
	}
}
