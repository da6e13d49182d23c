package starter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// TestShardedExecutionListsEveryStep finishes an apply of five steps in
// three shards: its description and its pages of steps list every step of
// every shard, in shard order, and a page crosses from one shard into the
// next.
func TestShardedExecutionListsEveryStep(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	sharded := starter.New(h.dev.Client, starter.Config{TaskQueue: h.queue, Store: h.store, BatchSize: 10, ShardUnits: 2})
	names := []string{"a", "b", "c", "d", "e"}
	var docs strings.Builder
	for _, n := range names {
		// A timeout of its own makes each step a unit of its own.
		fmt.Fprintf(&docs, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: %s}\nspec: {command: \"true\"}\nmeta: {timeout: 60}\n", n)
	}
	s := h.stack("sharded-steps")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := sharded.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs.String())})
	require.NoError(t, err)
	done, err := sharded.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	require.NotNil(t, done.Progress)
	require.NotNil(t, done.Progress.Shard, "the apply ran in shards")
	assert.Equal(t, 3, done.Progress.Shard.Shards)

	var want []string
	for _, n := range names {
		want = append(want, "exec/"+n)
	}
	ids := func(steps []model.StepProgress) []string {
		var out []string
		for _, sp := range steps {
			out = append(out, sp.ID)
			assert.Equal(t, model.StatusSucceeded, sp.Status, sp.ID)
		}
		return out
	}
	assert.ElementsMatch(t, want, ids(done.Steps), "the finished execution lists the steps of every shard")
	assert.Equal(t, 5, done.Progress.Entries)

	all, err := sharded.Steps(ctx, e.ID, 0, 100)
	require.NoError(t, err)
	require.Len(t, all.Steps, 5)
	page, err := sharded.Steps(ctx, e.ID, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, ids(all.Steps)[1:3], ids(page.Steps), "a page from offset 1 crosses into the second shard")
	assert.Equal(t, 1, page.Offset)
	assert.Equal(t, 5, page.Entries)
	rest, err := sharded.Steps(ctx, e.ID, 3, 100)
	require.NoError(t, err)
	assert.Equal(t, ids(all.Steps)[3:], ids(rest.Steps))
}
