package starter_test

import (
	"context"
	"errors"
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

// gatedChain is an Exec chain a → b → … ending in a gate that runs until
// flag exists; then after steps that wait for the gate. Each Exec has a
// timeout of its own, so each is a unit of its own.
func gatedChain(before []string, flag string, after []string) string {
	var b strings.Builder
	prev := ""
	step := func(name, command string) {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: %s}\nspec: {command: %q}\nmeta: {timeout: 120}\n", name, command)
		if prev != "" {
			fmt.Fprintf(&b, "dependsOn: [Exec/%s]\n", prev)
		}
	}
	for _, n := range before {
		step(n, "true")
		prev = n
	}
	step("gate", "while [ ! -f "+flag+" ]; do sleep 0.05; done")
	for _, n := range after {
		prev = "gate"
		step(n, "true")
	}
	return b.String()
}

// follower reads an execution's changes as a watcher does.
type changesReader struct {
	t      *testing.T
	s      *starter.Starter
	id     string
	cursor string
}

// read asks for the changes after the reader's cursor, page after page
// while the answer says there are more, and moves the cursor on. It
// returns the steps read (by id, the latest state) and the number of
// progress queries it cost.
func (r *changesReader) read(ctx context.Context, limit int) (map[string]model.StepProgress, int64) {
	r.t.Helper()
	before := r.s.ProgressQueries()
	out := map[string]model.StepProgress{}
	for range 100 {
		p, err := r.s.StepsSince(ctx, r.id, r.cursor, limit)
		require.NoError(r.t, err)
		require.NotEmpty(r.t, p.Cursor)
		if limit > 0 {
			require.LessOrEqual(r.t, len(p.Steps), limit)
		}
		for _, sp := range p.Steps {
			out[sp.ID] = sp
		}
		r.cursor = p.Cursor
		if !p.More {
			return out, r.s.ProgressQueries() - before
		}
	}
	r.t.Fatal("the answers never end")
	return nil, 0
}

func statusesOf(steps map[string]model.StepProgress) map[string]model.Status {
	out := map[string]model.Status{}
	for id, sp := range steps {
		out[id] = sp.Status
	}
	return out
}

// waitForStatus reads until step id shows want.
func waitForStatus(t *testing.T, ctx context.Context, s *starter.Starter, execID, step string, want model.Status) {
	t.Helper()
	for ctx.Err() == nil {
		p, err := s.StepsSince(ctx, execID, "", 0)
		require.NoError(t, err)
		for _, sp := range p.Steps {
			if sp.ID == step && sp.Status == want {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never %s", step, want)
}

// TestStepsSince follows a running execution by cursor: the first read
// lists every step; a read while nothing moves lists none and costs one
// query; once the gate opens, the next read lists only what moved, in
// its final state; a cursor the server did not give is refused.
func TestStepsSince(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flag := filepath.Join(t.TempDir(), "open")
	e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: h.stack("since").ID,
		SnapshotHash: h.snapshot(gatedChain([]string{"first"}, flag, []string{"x", "y", "z"}))})
	require.NoError(t, err)
	waitForStatus(t, ctx, h.starter, e.ID, "exec/gate", model.StatusRunning)

	r := &changesReader{t: t, s: h.starter, id: e.ID}
	all, _ := r.read(ctx, 0)
	assert.Equal(t, map[string]model.Status{"exec/first": model.StatusSucceeded, "exec/gate": model.StatusRunning,
		"exec/x": model.StatusPending, "exec/y": model.StatusPending, "exec/z": model.StatusPending}, statusesOf(all))

	idle, queries := r.read(ctx, 0)
	assert.Empty(t, idle, "nothing moved")
	assert.Equal(t, int64(1), queries, "a read of nothing is one query")

	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	moved, _ := r.read(ctx, 0)
	assert.Equal(t, map[string]model.Status{"exec/gate": model.StatusSucceeded,
		"exec/x": model.StatusSucceeded, "exec/y": model.StatusSucceeded, "exec/z": model.StatusSucceeded}, statusesOf(moved),
		"only what moved, as it ended")
	last, _ := r.read(ctx, 0)
	assert.Empty(t, last)

	for _, bad := range []string{"x12", "v", "v1.2", "s1.-2", strings.Repeat("s1.", 30000)} {
		_, err := h.starter.StepsSince(ctx, e.ID, bad, 0)
		assert.True(t, errors.Is(err, starter.ErrBadCursor), "%.20q: %v", bad, err)
	}
}

// TestStepsSinceAcrossShards follows a sharded execution (two steps a
// shard, the gate in the last one): its cursor holds a version per
// shard, so once the cursor is at a finished shard's end that shard is
// not asked again — a read while the gate holds costs the parent's query
// and the running shard's, a read after the end the parent's alone —
// and answers cut short by a limit page on across the shards, each step
// once.
func TestStepsSinceAcrossShards(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	sharded := starter.New(h.dev.Client, starter.Config{TaskQueue: h.queue, Store: h.store, BatchSize: 10, ShardUnits: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flag := filepath.Join(t.TempDir(), "open")
	e, err := sharded.StartApply(ctx, starter.StackRun{StackID: h.stack("since-shards").ID,
		SnapshotHash: h.snapshot(gatedChain([]string{"a", "b", "c", "d"}, flag, nil))})
	require.NoError(t, err)
	waitForStatus(t, ctx, sharded, e.ID, "exec/gate", model.StatusRunning)

	r := &changesReader{t: t, s: sharded, id: e.ID}
	all, _ := r.read(ctx, 0)
	assert.Equal(t, map[string]model.Status{"exec/a": model.StatusSucceeded, "exec/b": model.StatusSucceeded,
		"exec/c": model.StatusSucceeded, "exec/d": model.StatusSucceeded, "exec/gate": model.StatusRunning}, statusesOf(all))
	assert.True(t, strings.HasPrefix(r.cursor, "s"), "a cursor of shards: %s", r.cursor)

	idle, queries := r.read(ctx, 0)
	assert.Empty(t, idle)
	assert.Equal(t, int64(2), queries, "the parent and the running shard")

	paged := &changesReader{t: t, s: sharded, id: e.ID}
	one, _ := paged.read(ctx, 1)
	assert.Equal(t, statusesOf(all), statusesOf(one), "pages of one step list the same")

	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	done, err := sharded.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	moved, _ := r.read(ctx, 0)
	assert.Equal(t, map[string]model.Status{"exec/gate": model.StatusSucceeded}, statusesOf(moved))
	last, queries := r.read(ctx, 0)
	assert.Empty(t, last)
	assert.Equal(t, int64(1), queries, "every shard is read to its end: the parent alone")
}
