package providers

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// countingFile is the file provider counting its reads.
type countingFile struct {
	fileProvider
	reads *atomic.Int32
}

func (c countingFile) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	c.reads.Add(1)
	return c.fileProvider.Read(ctx, env, want)
}

// TestConvergeWithCallerState checks that a Converge given the state its
// caller has just read (Request.Have) does not read the object again and
// makes the same change as a Converge that reads it.
func TestConvergeWithCallerState(t *testing.T) {
	tests := []struct {
		name     string
		existing string // the file's bytes before, "" for none
		spec     model.Spec
		delete   bool
		action   model.Action
		outcome  model.Outcome
		after    string // the file's bytes after, "" for none
	}{
		{"create", "", model.Spec{"path": "/f", "content": "new"}, false, model.ActionCreate, model.OutcomeCreated, "new"},
		{"update content", "old", model.Spec{"path": "/f", "content": "new"}, false, model.ActionUpdate, model.OutcomeUpdated, "new"},
		{"update mode only", "same", model.Spec{"path": "/f", "content": "same", "mode": "0600"}, false, model.ActionUpdate, model.OutcomeUpdated, "same"},
		{"unchanged", "same", model.Spec{"path": "/f", "content": "same"}, false, model.ActionNoop, model.OutcomeUnchanged, "same"},
		{"ensure absent", "old", model.Spec{"path": "/f", "ensure": "absent"}, false, model.ActionDelete, model.OutcomeDeleted, ""},
		{"delete", "old", model.Spec{"path": "/f", "content": "old"}, true, model.ActionDelete, model.OutcomeDeleted, ""},
	}
	// run plans req (a noop Converge, which reads) and applies it, handing
	// the plan's Before over when withHave is set.
	run := func(t *testing.T, existing string, req Request, withHave bool) (Change, int32, string) {
		t.Helper()
		var reads atomic.Int32
		r := localRegistry(t)
		r.Register(countingFile{reads: &reads})
		req.Node = localNode(t)
		target := filepath.Join(req.Node.Root, "f")
		if existing != "" {
			require.NoError(t, os.WriteFile(target, []byte(existing), 0o644))
		}
		ctx := context.Background()
		plan := req
		plan.Noop = true
		planned, err := r.Converge(ctx, plan)
		require.NoError(t, err, "plan")
		if withHave {
			req.Have = &planned.Before
		}
		ch, err := r.Converge(ctx, req)
		require.NoError(t, err, "apply")
		got, err := os.ReadFile(target)
		if err != nil {
			require.True(t, os.IsNotExist(err), "%v", err)
		}
		return ch, reads.Load(), string(got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Kind: "file", Name: "f", Spec: tt.spec, Delete: tt.delete}
			ch, reads, got := run(t, tt.existing, req, true)
			assert.Equal(t, int32(1), reads, "provider read %d times, want 1 (the plan's only)", reads)
			require.Equal(t, tt.action, ch.Action, "got %s/%s, want %s/%s", ch.Action, ch.Outcome, tt.action, tt.outcome)
			assert.Equal(t, tt.outcome, ch.Outcome, "got %s/%s, want %s/%s", ch.Action, ch.Outcome, tt.action, tt.outcome)
			assert.Equal(t, tt.after, got, "file holds")
			ref, refReads, refGot := run(t, tt.existing, req, false)
			assert.Equal(t, int32(2), refReads, "without a caller state the provider read %d times, want 2", refReads)
			assert.Equal(t, got, refGot, "file holds %q with a caller state, %q without", got, refGot)
			assert.Equal(t, ref, ch, "change with a caller state\n%+v\ndiffers from the change without\n%+v", ch, ref)
		})
	}
}

// TestConvergeTrustsCallerState checks that the caller's state is the one
// diffed against: a state saying the file is already as wanted leaves the
// file alone, even though the disk says otherwise.
func TestConvergeTrustsCallerState(t *testing.T) {
	var reads atomic.Int32
	r := localRegistry(t)
	r.Register(countingFile{reads: &reads})
	node := localNode(t)
	target := filepath.Join(node.Root, "f")
	require.NoError(t, os.WriteFile(target, []byte("want"), 0o644))
	req := Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "want"}, Noop: true}
	planned, err := r.Converge(context.Background(), req)
	require.NoError(t, err, "plan: %v %+v", err, planned)
	require.Equal(t, model.ActionNoop, planned.Action, "plan: %v %+v", err, planned)
	require.NoError(t, os.WriteFile(target, []byte("edited since"), 0o644))
	req.Noop = false
	req.Have = &planned.Before
	ch, err := r.Converge(context.Background(), req)
	require.NoError(t, err, "apply: %v %+v", err, ch)
	require.Equal(t, model.ActionNoop, ch.Action, "apply: %v %+v", err, ch)
	require.Equal(t, model.OutcomeUnchanged, ch.Outcome, "apply: %v %+v", err, ch)
	require.Equal(t, int32(1), reads.Load(), "provider read %d times, want 1", reads.Load())
	got, _ := os.ReadFile(target)
	require.Equal(t, "edited since", string(got), "file holds %q: the caller's state was not the one used", got)
}
