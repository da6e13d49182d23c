package starter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// TestShardedDecisionOnSeveralSteps pauses a sharded apply whose first
// shard holds two failing steps and whose second holds a third: a decision
// naming a step of the shard not yet run is refused, listing what waits in
// the running shard; all retries that shard's two steps together, and the
// next shard runs after.
func TestShardedDecisionOnSeveralSteps(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	sharded := starter.New(h.dev.Client, starter.Config{TaskQueue: h.queue, Store: h.store, BatchSize: 10, ShardUnits: 2})
	root := t.TempDir()
	flag := filepath.Join(root, "flag")
	var docs strings.Builder
	for _, n := range []string{"a", "b", "c"} {
		// A timeout of its own makes each step a unit of its own.
		fmt.Fprintf(&docs, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: %s}\nspec: {command: \"test -f %s\"}\nmeta: {timeout: 60}\n", n, flag)
	}
	s := h.stack("sharded-pause")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := sharded.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs.String()), OnFailure: model.OnFailurePause})
	require.NoError(t, err)
	waitFor(t, func() bool {
		got, err := sharded.Describe(ctx, e.ID)
		return err == nil && got.Status == model.ExecWaiting && got.Progress != nil && len(got.Progress.Waiting) == 2
	})
	got, err := sharded.Describe(ctx, e.ID)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"exec/a", "exec/b"}, got.Progress.Waiting, "the first shard's steps wait")

	_, err = sharded.Decide(ctx, e.ID, model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a", "exec/c"}})
	require.ErrorIs(t, err, starter.ErrNotWaiting)
	assert.ErrorContains(t, err, `step "exec/c" is not waiting for a decision (waiting: exec/a, exec/b)`)

	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	res, err := sharded.Decide(ctx, e.ID, model.DecisionRequest{Action: model.DecisionRetry, All: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"exec/a", "exec/b"}, res.Steps)
	done, err := sharded.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
}
