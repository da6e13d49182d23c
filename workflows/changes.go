package workflows

import (
	"cmp"
	"slices"

	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// An executor counts the changes of its units' states: every change a
// follower could see in a progress entry (a unit started, completed,
// failed, was held, retried, skipped, abandoned or cancelled, a dependency
// failure reached it, a compensation undid it, the run ended before it
// started) bumps the counter by one, and the unit keeps the value it got.
// Each unit's value is thus unique, and the units changed after version v
// are those whose value is above v. A new executor gives its units the
// versions 1 to n in their order, so the changes after 0 are every unit. The progress query, asked with a
// ProgressSince, answers those units' entries, oldest change first; a
// follower that asks again from the answer's Version misses no change and
// reads, on each poll, what moved rather than every step.
//
// The counter lives in the workflow's memory and moves only with workflow
// code, so a replay of the history gets the same values: a version stays
// valid for the execution's whole life, across workers. It starts at 0
// with every workflow (each shard of a sharded execution has its own).

// ProgressSince is the progress query's third argument: answer the
// entries of the units changed after Version instead of a page by offset
// (0: every unit). The query's first two arguments (offset, limit) come before
// it, so a caller that sends two, or none, reads pages as before.
type ProgressSince struct {
	Version int64 `json:"version"`
}

// touch records a change of unit i.
func (e *Executor) touch(i int) {
	e.version++
	e.state[i].version = e.version
}

// scheduled is the scheduler's OnChange: every change of a unit's
// scheduling state but becoming ready, which shows as pending like the
// state before it.
func (e *Executor) scheduled(v int, from, to dag.State) {
	if from == dag.Pending && to == dag.Ready {
		return
	}
	e.touch(v)
}

// touchUnstarted records that the units never started show skipped now
// that the run loop is over.
func (e *Executor) touchUnstarted() {
	for i := range e.units {
		if s := e.sched.State(i); s == dag.Pending || s == dag.Ready {
			e.touch(i)
		}
	}
}

// Version is the executor's change counter: the number of changes of its
// units' states so far.
func (e *Executor) Version() int64 { return e.version }

// Changes answers the progress query for the changes after version since:
// the execution's status and counts as Progress gives them, and the
// entries of every unit changed after since, oldest change first, whole
// units, until limit entries (0 = as many as fit) or about
// maxProgressBytes are reached. When every change fits, Version is the counter and
// More false; else Version is the last listed unit's and More true, and
// the caller asks again from there. A since above the counter is not one
// of this execution's: the answer starts from 0 and says Reset. Entries
// and Offset are 0.
//
// Cost: O(units) to find the changed units, O(c log c) to order the c
// changed ones, and the listed entries; an answer with nothing changed is
// a few hundred bytes.
func (e *Executor) Changes(since int64, limit int) *model.ProgressPage {
	if limit <= 0 || limit > MaxProgressSteps {
		limit = MaxProgressSteps
	}
	p := e.progressHead()
	if since < 0 || since > e.version {
		since, p.Reset = 0, true
	}
	var changed []int
	for i := range e.state {
		if e.state[i].version > since {
			changed = append(changed, i)
		}
	}
	slices.SortFunc(changed, func(a, b int) int {
		return cmp.Compare(e.state[a].version, e.state[b].version)
	})
	size := 0
	add := func(sp model.StepProgress) {
		p.Steps = append(p.Steps, sp)
		size += approxSize(&sp)
	}
	for k, i := range changed {
		if k > 0 && (len(p.Steps) >= limit || size >= maxProgressBytes) {
			p.Version, p.More = e.state[changed[k-1]].version, true
			break
		}
		e.unitEntries(i, add)
	}
	return p
}
