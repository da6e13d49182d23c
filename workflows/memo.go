package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// MemoDecisions is the memo key under which an execution keeps its last
// operator acts (decisions, approvals, rejections, a cancellation), so the
// Temporal UI shows them: a list of MemoEntry, newest last, at most
// maxMemoEntries.
const MemoDecisions = "cairnDecisions"

// maxMemoEntries bounds MemoDecisions: the memo is rewritten whole on
// each act.
const maxMemoEntries = 20

// decisionMemoChange versions the memo: runs recorded before it wrote
// none.
const decisionMemoChange = "decision-memo"

// MemoEntry is one operator act in MemoDecisions.
type MemoEntry struct {
	At      time.Time `json:"at"`
	Action  string    `json:"action"`
	By      string    `json:"by,omitempty"`
	Steps   []string  `json:"steps,omitempty"`
	Comment string    `json:"comment,omitempty"`
}

// memoLog keeps an execution's MemoDecisions.
type memoLog struct {
	entries []MemoEntry
	checked bool
	on      bool
}

// add appends e (its At set now) and writes the memo. Cost: one memo
// upsert command of at most maxMemoEntries entries.
func (m *memoLog) add(ctx workflow.Context, e MemoEntry) {
	if !m.checked {
		m.on = workflow.GetVersion(ctx, decisionMemoChange, workflow.DefaultVersion, 1) >= 1
		m.checked = true
	}
	if !m.on {
		return
	}
	e.At = workflow.Now(ctx)
	if len(e.Comment) > 200 {
		e.Comment = e.Comment[:200] + "…"
	}
	m.entries = append(m.entries, e)
	if n := len(m.entries) - maxMemoEntries; n > 0 {
		m.entries = append([]MemoEntry(nil), m.entries[n:]...)
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{MemoDecisions: m.entries}); err != nil {
		workflow.GetLogger(ctx).Warn("decision memo not updated", "error", err)
	}
}
