package activities

import (
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// unitRun walks one unit's steps in dependency order: a step is ready once
// every step it depends on inside the unit finished without failing
// (skipped counts as done); one whose dependency failed is blocked and
// never runs. Dependencies outside the unit were settled by the executor
// before the unit started. The steps come in an order where each follows
// its dependencies in the unit (the planner's), which lets one pass
// propagate blocking. Cost: O(steps) per wave.
type unitRun struct {
	runs  []*stepRun
	index map[string]int
	deps  [][]int // in-unit dependencies per run
	state []runState
	// outs are the outputs of the unit's finished steps, for dependents'
	// expressions in the same unit (their records are written later).
	outs map[string]outputsRecord
}

type runState uint8

const (
	runWaiting runState = iota
	runStarted
	runOK     // succeeded, unchanged or skipped
	runFailed // failed or blocked
)

func newUnitRun(steps []*planner.StoredStep) *unitRun {
	u := &unitRun{
		runs:  make([]*stepRun, len(steps)),
		index: make(map[string]int, len(steps)),
		deps:  make([][]int, len(steps)),
		state: make([]runState, len(steps)),
		outs:  map[string]outputsRecord{},
	}
	for i, s := range steps {
		u.runs[i] = &stepRun{step: s, res: contract.StepResult{StepID: s.ID}}
		u.index[s.ID] = i
	}
	for i, s := range steps {
		for _, d := range planner.Deps(&s.Step) {
			if j, ok := u.index[d]; ok && j != i {
				u.deps[i] = append(u.deps[i], j)
			}
		}
	}
	return u
}

// skip marks the steps an operator skipped, unless an earlier attempt
// already finished them.
func (u *unitRun) skip(ids []string) {
	for _, id := range ids {
		if i, ok := u.index[id]; ok && !u.runs[i].done {
			u.runs[i].skip("skipped by operator")
		}
	}
}

// ready returns the steps that can run now and settles the rest: steps
// finished by an earlier attempt (or skipped) are done, steps whose
// dependency failed are blocked.
func (u *unitRun) ready() []*stepRun {
	var wave []*stepRun
	for i, r := range u.runs {
		if u.state[i] != runWaiting {
			continue
		}
		blocked, waiting := "", false
		for _, j := range u.deps[i] {
			switch u.state[j] {
			case runFailed:
				if blocked == "" {
					blocked = u.runs[j].step.ID
					if b := u.runs[j].res.Blocked; b != "" {
						blocked = b // name the step that failed, not one it blocked
					}
				}
			case runWaiting, runStarted:
				waiting = true
			}
		}
		switch {
		case blocked != "":
			r.block(blocked)
			u.state[i] = runFailed
		case waiting:
		case r.done:
			u.finish([]*stepRun{r})
		default:
			u.state[i] = runStarted
			wave = append(wave, r)
		}
	}
	return wave
}

// aheadKinds are the kinds whose state only their own step changes: a
// file's or directory's before-state is the same read before or after the
// steps it depends on ran (a directory created first leaves a file in it
// absent either way).
var aheadKinds = map[string]bool{"file": true, "directory": true, model.TaskGroup: true, model.TaskStage: true, model.TaskSkipped: true}

// plannableAhead lists the steps that can be planned before the unit
// runs: of a kind in aheadKinds, with nothing resolved at run time, and
// depending in the unit only on such steps — a step after a command is
// planned when its turn comes, since the command may change what it reads.
func (u *unitRun) plannableAhead() []*stepRun {
	ok := make([]bool, len(u.runs))
	var out []*stepRun
	for i, r := range u.runs {
		ok[i] = aheadKinds[r.step.Base] && !r.step.NeedsResolve()
		for _, j := range u.deps[i] {
			ok[i] = ok[i] && ok[j]
		}
		if ok[i] && !r.done {
			out = append(out, r)
		}
	}
	return out
}

// finish settles steps that ran, keeping their outputs for dependents.
func (u *unitRun) finish(runs []*stepRun) {
	for _, r := range runs {
		i := u.index[r.step.ID]
		if r.res.Outcome == model.OutcomeFailed {
			u.state[i] = runFailed
			continue
		}
		u.state[i] = runOK
		if r.res.Outcome == model.OutcomeSkipped {
			continue
		}
		if r.req.Noop || r.res.Action == "" {
			// Planned only: what exists now is what dependents see.
			u.outs[r.step.ID] = outputsRecord{ID: r.plan.After.ID, Outputs: r.plan.After.Outputs, Action: r.res.Action}
			continue
		}
		u.outs[r.step.ID] = r.outputs()
	}
}

// outputsOf returns the outputs of a step of the unit that finished (u
// nil: none).
func (u *unitRun) outputsOf(id string) (outputsRecord, bool) {
	if u == nil {
		return outputsRecord{}, false
	}
	rec, ok := u.outs[id]
	return rec, ok
}

func (r *stepRun) block(by string) {
	r.res.Action, r.res.Outcome, r.res.Error = "", model.OutcomeSkipped, ""
	r.res.Blocked = by
	r.done = true
}
