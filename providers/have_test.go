package providers

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

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
			if err := os.WriteFile(target, []byte(existing), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		plan := req
		plan.Noop = true
		planned, err := r.Converge(ctx, plan)
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if withHave {
			req.Have = &planned.Before
		}
		ch, err := r.Converge(ctx, req)
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		got, err := os.ReadFile(target)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return ch, reads.Load(), string(got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Kind: "file", Name: "f", Spec: tt.spec, Delete: tt.delete}
			ch, reads, got := run(t, tt.existing, req, true)
			if reads != 1 {
				t.Errorf("provider read %d times, want 1 (the plan's only)", reads)
			}
			if ch.Action != tt.action || ch.Outcome != tt.outcome {
				t.Errorf("got %s/%s, want %s/%s", ch.Action, ch.Outcome, tt.action, tt.outcome)
			}
			if got != tt.after {
				t.Errorf("file holds %q, want %q", got, tt.after)
			}
			ref, refReads, refGot := run(t, tt.existing, req, false)
			if refReads != 2 {
				t.Errorf("without a caller state the provider read %d times, want 2", refReads)
			}
			if refGot != got {
				t.Errorf("file holds %q with a caller state, %q without", got, refGot)
			}
			if !reflect.DeepEqual(ch, ref) {
				t.Errorf("change with a caller state\n%+v\ndiffers from the change without\n%+v", ch, ref)
			}
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
	if err := os.WriteFile(target, []byte("want"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "want"}, Noop: true}
	planned, err := r.Converge(context.Background(), req)
	if err != nil || planned.Action != model.ActionNoop {
		t.Fatalf("plan: %v %+v", err, planned)
	}
	if err := os.WriteFile(target, []byte("edited since"), 0o644); err != nil {
		t.Fatal(err)
	}
	req.Noop = false
	req.Have = &planned.Before
	ch, err := r.Converge(context.Background(), req)
	if err != nil || ch.Action != model.ActionNoop || ch.Outcome != model.OutcomeUnchanged {
		t.Fatalf("apply: %v %+v", err, ch)
	}
	if reads.Load() != 1 {
		t.Fatalf("provider read %d times, want 1", reads.Load())
	}
	if got, _ := os.ReadFile(target); string(got) != "edited since" {
		t.Fatalf("file holds %q: the caller's state was not the one used", got)
	}
}
