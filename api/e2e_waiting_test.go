package api

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// waitForFile is an Exec package whose step runs until path exists; with
// need set, it first fails unless need exists.
func waitForFile(name, path, need string) string {
	cmd := fmt.Sprintf("while [ ! -f %s ]; do sleep 0.1; done", path)
	if need != "" {
		cmd = fmt.Sprintf("test -f %s && %s", need, cmd)
	}
	return fmt.Sprintf("kind: Exec\nmetadata: {name: %s}\nspec: {command: %q}\n", name, cmd)
}

// TestE2EWaitingExecutionsListedApart: one execution paused for a decision
// (OnFailure pause, a failing step), one running (a long step) and one
// completed; the list's status waiting names exactly the paused one (with
// awaiting "decision"), status running exactly the running one; once the
// paused one is retried and runs again, it moves from one list to the
// other.
func TestE2EWaitingExecutionsListedApart(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	dir := t.TempDir()
	stack := func(name string) string {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: name})
		require.NoError(t, err)
		return st.ID
	}
	apply := func(stackID, docs string, onFailure model.OnFailure) *model.Execution {
		ex, err := h.client.Apply(ctx, stackID, &client.Document{Data: []byte(docs), Format: "yaml"}, client.ApplyOptions{OnFailure: onFailure})
		require.NoError(t, err)
		return ex
	}
	release := filepath.Join(dir, "release")
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	fixed := filepath.Join(dir, "fixed")

	doneStack, pausedStack, runningStack := stack("done"), stack("paused"), stack("running")
	done := h.applyWait(doneStack, "kind: Exec\nmetadata: {name: quick}\nspec: {command: \"true\"}\n", client.ApplyOptions{})
	mustStatus(t, done, model.ExecCompleted)
	paused := apply(pausedStack, waitForFile("needs-fix", release, fixed), model.OnFailurePause)
	running := apply(runningStack, waitForFile("long", release, ""), "")
	ours := []string{doneStack, pausedStack, runningStack}

	// listed lists executions of the three stacks with the status (other
	// tests share the Temporal namespace), by id.
	listed := func(status model.ExecutionStatus) map[string]model.Execution {
		list, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Status: status, Limit: 1000})
		require.NoError(t, err)
		out := map[string]model.Execution{}
		for _, e := range list.Executions {
			if slices.Contains(ours, e.StackID) {
				out[e.ID] = e
			}
		}
		return out
	}
	exactly := func(status model.ExecutionStatus, id string) func() bool {
		return func() bool {
			got := listed(status)
			_, ok := got[id]
			return ok && len(got) == 1
		}
	}

	waitUntil(t, "the paused execution listed as waiting, alone", exactly(model.ExecWaiting, paused.ID))
	waitUntil(t, "the running execution listed as running, alone", exactly(model.ExecRunning, running.ID))
	w := listed(model.ExecWaiting)[paused.ID]
	assert.Equal(t, model.ExecWaiting, w.Status)
	assert.Equal(t, "decision", w.Awaiting)
	r := listed(model.ExecRunning)[running.ID]
	assert.Equal(t, model.ExecRunning, r.Status)
	assert.Empty(t, r.Awaiting)
	all := listed("")
	assert.Equal(t, model.ExecWaiting, all[paused.ID].Status, "unfiltered, the paused execution is waiting")
	assert.Equal(t, "decision", all[paused.ID].Awaiting)
	assert.Equal(t, model.ExecRunning, all[running.ID].Status)
	assert.Equal(t, model.ExecCompleted, all[done.ID].Status)

	shown, err := h.client.GetExecution(ctx, paused.ID)
	require.NoError(t, err)
	assert.Equal(t, model.ExecWaiting, shown.Status)
	assert.Equal(t, "decision", shown.Awaiting)

	// Fixed and retried, the step runs again (until released): the
	// execution runs, it no longer waits.
	require.NoError(t, os.WriteFile(fixed, nil, 0o644))
	res, err := h.client.Decide(ctx, paused.ID, model.DecisionRequest{Action: model.DecisionRetry})
	require.NoError(t, err)
	assert.Equal(t, model.DecisionRetry, res.Action)
	waitUntil(t, "the retried execution leaves the waiting list", func() bool { return len(listed(model.ExecWaiting)) == 0 })
	waitUntil(t, "the retried execution listed as running", func() bool {
		got := listed(model.ExecRunning)
		_, a := got[paused.ID]
		_, b := got[running.ID]
		return a && b && len(got) == 2
	})

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	for _, id := range []string{paused.ID, running.ID} {
		ex, err := h.client.Wait(ctx, id, 100*time.Millisecond)
		require.NoError(t, err)
		mustStatus(t, ex, model.ExecCompleted)
	}
	waitUntil(t, "nothing of ours running", func() bool { return len(listed(model.ExecRunning)) == 0 })
}
