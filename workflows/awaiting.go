package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/internal/searchattr"
)

// While an execution waits for an operator — a step paused for a decision
// (OnFailure pause) or a plan awaiting approval — its CairnAwaiting search
// attribute says for what ("decision" or "approval"); it is unset when the
// wait ends. Visibility lists so tell waiting executions from running ones
// without asking each, and the Temporal UI filters them
// (`CairnAwaiting = 'decision'`).
//
// A sharded execution pauses in its running shard's child workflow: the
// child carries the attribute and tells its parent with AwaitingSignal, so
// the execution users see (the parent) carries it too.

// AwaitingDecision is model.ProgressPage.Awaiting, and CairnAwaiting,
// while a step waits for an operator's decision.
const AwaitingDecision = "decision"

// AwaitingSignal is the signal a shard child sends its parent when what
// it awaits changed (an awaitingNote).
const AwaitingSignal = "cairn-awaiting"

// awaitingChange is the version change that introduced CairnAwaiting: an
// execution that began waiting under a build without it replays without
// setting it, and never sets it.
const awaitingChange = "cairn-awaiting-attribute"

// awaitingNote is what a shard child tells its parent: Seq orders the
// notes of one child (signals may arrive out of order); Awaiting is
// empty when the child no longer waits.
type awaitingNote struct {
	Shard    string `json:"shard"`
	Seq      int    `json:"seq"`
	Awaiting string `json:"awaiting,omitempty"`
}

// awaitingMark keeps a workflow's CairnAwaiting search attribute in step
// with what it awaits. The zero value shows nothing.
type awaitingMark struct {
	shown   string
	version workflow.Version
	checked bool
}

// set writes value to CairnAwaiting (empty unsets it) when it differs from
// what was last written, and reports whether it wrote. Cost: one upsert
// command per change, and a version marker on the first.
func (m *awaitingMark) set(ctx workflow.Context, value string) bool {
	if value == m.shown {
		return false
	}
	if !m.checked {
		m.version = workflow.GetVersion(ctx, awaitingChange, workflow.DefaultVersion, 1)
		m.checked = true
	}
	if m.version == workflow.DefaultVersion {
		return false
	}
	upd := searchattr.Awaiting.ValueSet(value)
	if value == "" {
		upd = searchattr.Awaiting.ValueUnset()
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, upd); err != nil {
		workflow.GetLogger(ctx).Warn("awaiting search attribute not updated", "awaiting", value, "error", err)
		return false
	}
	m.shown = value
	return true
}

// parentLink sends a shard child's awaiting notes to its parent.
type parentLink struct {
	parent workflow.Execution
	shard  string
	seq    int
}

// note tells the parent what the child awaits now, without waiting for
// the signal's delivery (a failure is logged).
func (l *parentLink) note(ctx workflow.Context, awaiting string) {
	l.seq++
	f := workflow.SignalExternalWorkflow(ctx, l.parent.ID, l.parent.RunID, AwaitingSignal,
		awaitingNote{Shard: l.shard, Seq: l.seq, Awaiting: awaiting})
	workflow.Go(ctx, func(c workflow.Context) {
		if err := f.Get(c, nil); err != nil {
			workflow.GetLogger(c).Warn("parent not told what the shard awaits", "parent", l.parent.ID, "error", err)
		}
	})
}

// markAwaiting sets CairnAwaiting to "decision" while a unit waits for a
// decision and unsets it after, telling a shard's parent.
func (e *Executor) markAwaiting(ctx workflow.Context) {
	value := ""
	if e.sched.Count(dag.Held) > 0 {
		value = AwaitingDecision
	}
	if e.awaiting.set(ctx, value) && e.parent != nil {
		e.parent.note(ctx, value)
	}
}

// TellParent makes a shard child's executor tell its parent (the
// execution users see) when it starts and stops waiting for a decision.
func (e *Executor) TellParent(ctx workflow.Context) {
	info := workflow.GetInfo(ctx)
	if p := info.ParentWorkflowExecution; p != nil {
		e.parent = &parentLink{parent: *p, shard: info.WorkflowExecution.ID}
	}
}

// followShards listens, for the life of the workflow, to the awaiting
// notes of the running shard and mirrors them on the parent's own
// CairnAwaiting and progress. Notes of another shard, and older notes of
// this one, are ignored.
func (s *shardRun) followShards(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, AwaitingSignal)
	workflow.Go(ctx, func(c workflow.Context) {
		for {
			var n awaitingNote
			ch.Receive(c, &n)
			if n.Shard == "" || n.Shard != s.following || n.Seq <= s.noteSeq {
				continue
			}
			s.noteSeq = n.Seq
			s.childAwaits = n.Awaiting
			s.awaiting.set(c, n.Awaiting)
		}
	})
}

// follow starts following shard child id's notes ("" stops), and clears
// what the previous one awaited.
func (s *shardRun) follow(ctx workflow.Context, id string) {
	s.following, s.noteSeq, s.childAwaits = id, 0, ""
	s.awaiting.set(ctx, "")
}
