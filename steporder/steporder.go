// Package steporder walks one unit's steps in dependency order: which
// steps are ready together, which a failure cut off (and which failed
// step is to blame), and which can be planned before the unit runs. It
// holds only the order; running the steps is the activities' work.
package steporder

import (
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/planner"
)

// Unit is the walk of one unit's steps on the dag scheduler: a step is
// ready once every step it depends on inside the unit finished without
// failing (skipped counts as done); one whose dependency failed is
// upstream-failed and never runs (see Blocked). Dependencies outside the
// unit were settled by the executor before the unit started. Steps are
// named by their position in the unit. Cost: O(steps + edges) a unit,
// plus the scheduler's O(log steps) a step.
type Unit struct {
	index map[string]int
	deps  [][]int // in-unit dependencies per step
	sched *dag.Scheduler
}

// New returns the walk of a unit's steps (planner.Deps are their
// dependencies).
func New(steps []*planner.StoredStep) *Unit {
	u := &Unit{index: make(map[string]int, len(steps)), deps: make([][]int, len(steps))}
	for i, s := range steps {
		u.index[s.ID] = i
	}
	b := dag.NewBuilder(len(steps))
	for i, s := range steps {
		for _, d := range planner.Deps(&s.Step) {
			if j, ok := u.index[d]; ok && j != i {
				u.deps[i] = append(u.deps[i], j)
				b.DependsOn(i, j)
			}
		}
	}
	u.sched = b.Build(dag.Options{Parallelism: len(steps)})
	return u
}

// Index is the position of step id in the unit; false when the step is
// not the unit's.
func (u *Unit) Index(id string) (int, bool) {
	i, ok := u.index[id]
	return i, ok
}

// Next returns a step that is ready: every one of its dependencies in
// the unit settled. false when none is ready now.
func (u *Unit) Next() (int, bool) { return u.sched.Next() }

// Succeed settles step i as done; its dependents may become ready.
func (u *Unit) Succeed(i int) { u.sched.Succeed(i) }

// Skip settles step i as skipped, which its dependents count as done.
func (u *Unit) Skip(i int) { u.sched.Skip(i) }

// Fail settles step i as failed: its dependents never become ready.
func (u *Unit) Fail(i int) { u.sched.Fail(i, false) }

// Blocked maps each step a failure cut off to the failed step at the root
// of it (through any steps cut off in between). Ask once nothing is ready
// any more.
func (u *Unit) Blocked() map[int]int {
	out := map[int]int{}
	for i := range u.deps {
		cause, ok := u.sched.Cause(i)
		if !ok {
			continue
		}
		for cause >= 0 && u.sched.State(cause) == dag.UpstreamFailed {
			cause, _ = u.sched.Cause(cause)
		}
		if cause >= 0 {
			out[i] = cause
		}
	}
	return out
}

// Ahead lists, in unit order, the steps that can be planned before the
// unit runs: those ok accepts whose dependencies in the unit can all be
// planned ahead too.
func (u *Unit) Ahead(ok func(i int) bool) []int {
	ahead := make([]bool, len(u.deps))
	var out []int
	for i := range u.deps {
		ahead[i] = ok(i)
		for _, j := range u.deps[i] {
			ahead[i] = ahead[i] && ahead[j]
		}
		if ahead[i] {
			out = append(out, i)
		}
	}
	return out
}
