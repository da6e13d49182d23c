package activities

import (
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/stepdata"
	"github.com/cairn-io/cairn/steporder"
)

// unitRun is one unit's steps going through an activity, walked in
// dependency order (steporder.Unit): each wave is every step ready at
// once; a step whose dependency in the unit failed never runs and names
// the failed step (Blocked).
type unitRun struct {
	runs  []*stepRun
	order *steporder.Unit
	// outs are the outputs of the unit's finished steps, for dependents'
	// expressions in the same unit (their records are written later).
	outs map[string]stepdata.Outputs
	// params are the execution's parameters, read by the first step that
	// resolves a ref.
	params paramsLoader
	// refresh holds the steps the executor found refreshed by steps of
	// other units; noop says results are plans (a dry-run or noop unit).
	refresh map[string]bool
	noop    bool
}

func newUnitRun(steps []*planner.StoredStep) *unitRun {
	u := &unitRun{runs: make([]*stepRun, len(steps)), order: steporder.New(steps), outs: map[string]stepdata.Outputs{}}
	for i, s := range steps {
		u.runs[i] = &stepRun{step: s, res: contract.StepResult{StepID: s.ID}}
	}
	return u
}

// refreshFrom takes the unit input's refreshed steps and noop mode.
func (u *unitRun) refreshFrom(in contract.UnitInput) {
	u.noop = in.Noop
	if len(in.Refresh) == 0 {
		return
	}
	u.refresh = make(map[string]bool, len(in.Refresh))
	for _, id := range in.Refresh {
		u.refresh[id] = true
	}
}

// refreshed reports whether r is refreshed: a step of this unit it
// subscribes to changed, as its result (or, on a retried attempt, its
// record) says — those steps are its dependencies, so they have finished —
// or the executor said a step of another unit did. The executor's word is
// a claim: it counts only for a step that subscribes to one outside.
func (u *unitRun) refreshed(r *stepRun) bool {
	outside := false
	for _, src := range r.step.Subscribes {
		j, ok := u.order.Index(src)
		if !ok {
			outside = true
			continue
		}
		if u.runs[j].res.Notifies(u.noop) {
			return true
		}
	}
	return outside && u.refresh[r.step.ID]
}

// skip marks the steps an operator skipped, unless an earlier attempt
// already finished them.
func (u *unitRun) skip(ids []string) {
	for _, id := range ids {
		if i, ok := u.order.Index(id); ok && !u.runs[i].done {
			u.runs[i].skip("skipped by operator")
		}
	}
}

// ready returns the steps that can run now. Steps an earlier attempt
// finished (or the operator skipped) are settled on the way; once nothing
// is left to run, the steps cut off by a failure are marked blocked.
func (u *unitRun) ready() []*stepRun {
	var wave []*stepRun
	for {
		v, ok := u.order.Next()
		if !ok {
			break
		}
		if r := u.runs[v]; r.done {
			u.finish([]*stepRun{r})
		} else {
			wave = append(wave, r)
		}
	}
	if len(wave) == 0 {
		u.blockRest()
	}
	return wave
}

// blockRest marks the steps that never ran, naming the failed step that
// cut each off.
func (u *unitRun) blockRest() {
	for i, cause := range u.order.Blocked() {
		u.runs[i].block(u.runs[cause].step.ID)
	}
}

// aheadKinds are the kinds whose state only their own step changes: a
// file's or directory's before-state is the same read before or after the
// steps it depends on ran (a directory created first leaves a file in it
// absent either way).
var aheadKinds = map[string]bool{"file": true, "directory": true, model.TaskGroup: true, model.TaskStage: true, model.TaskSkipped: true}

// plannableAhead lists the steps that can be planned before the unit
// runs: of a kind in aheadKinds, with nothing resolved at run time and no
// subscriptions, and depending in the unit only on such steps — a step
// after a command is planned when its turn comes, since the command may
// change what it reads.
func (u *unitRun) plannableAhead() []*stepRun {
	var out []*stepRun
	// A subscriber waits for its sources' results: they may refresh it.
	for _, i := range u.order.Ahead(func(i int) bool {
		s := u.runs[i].step
		return aheadKinds[s.Base] && !s.NeedsResolve() && len(s.Subscribes) == 0
	}) {
		if !u.runs[i].done {
			out = append(out, u.runs[i])
		}
	}
	return out
}

// finish settles steps that ran, keeping their outputs for dependents.
func (u *unitRun) finish(runs []*stepRun) {
	for _, r := range runs {
		i, _ := u.order.Index(r.step.ID)
		switch r.res.Outcome {
		case model.OutcomeFailed, model.OutcomeUnknown:
			u.order.Fail(i)
			continue
		case model.OutcomeSkipped:
			u.order.Skip(i)
			continue
		}
		u.order.Succeed(i)
		if r.req.Noop || r.res.Action == "" {
			// Planned only: what exists now is what dependents see.
			u.outs[r.step.ID] = stepdata.Outputs{ID: r.plan.After.ID, Outputs: r.redactedOutputs(), Action: r.res.Action}
			continue
		}
		u.outs[r.step.ID] = r.outputs()
	}
}

// outputsOf returns the outputs of a step of the unit that finished (u
// nil: none).
func (u *unitRun) outputsOf(id string) (stepdata.Outputs, bool) {
	if u == nil {
		return stepdata.Outputs{}, false
	}
	rec, ok := u.outs[id]
	return rec, ok
}

func (r *stepRun) block(by string) {
	r.res.Action, r.res.Outcome, r.res.Error = "", model.OutcomeSkipped, ""
	r.res.Blocked = by
	r.done = true
}
