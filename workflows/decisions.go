package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// With OnFailure pause a failed unit waits, and nothing new starts, until
// an operator answers with the "decision" Update: retry runs the unit
// again; skip lets its dependents run (or, when the failure kept steps of
// the unit from running, runs the unit again without the failed steps);
// rollback and abort fail it and stop, rollback compensating what was done.

// pendingDecision is a decision the Update handler queued for the run loop,
// with the waiting units it applies to (in unit order) and their steps.
type pendingDecision struct {
	req     model.DecisionRequest
	targets []int
	steps   []string
	applied bool
	// checking: who asked is being checked; the decision holds its
	// targets and its place in the queue meanwhile.
	checking bool
}

// ValidateDecision accepts a decision only while every step it names waits
// for one.
func (e *Executor) ValidateDecision(req model.DecisionRequest) error {
	switch req.Action {
	case model.DecisionRetry, model.DecisionSkip, model.DecisionRollback, model.DecisionAbort:
	default:
		return fmt.Errorf("unknown decision %q: want retry, skip, rollback or abort", req.Action)
	}
	if _, err := e.decisionTargets(req); err != nil {
		return err
	}
	return nil
}

// decisionNonceChange versions the decision's nonce: decisions recorded
// before it consumed none.
const decisionNonceChange = "decision-nonce"

// Decide is the decision Update handler: it checks who asked against the
// nonce the starter recorded for the decision (vouchAct; runs recorded
// before decisionNonceChange take the payload's By), queues the decision
// for the run loop and returns once the loop applied it to every unit it
// names, in one pass of the loop, with the principal who decided. The
// decision takes its targets and its place in the queue before the check,
// so decisions sent together apply in the order they came, and leaves
// both when the check refuses it.
func (e *Executor) Decide(ctx workflow.Context, req model.DecisionRequest) (model.DecisionResult, string, error) {
	check := workflow.GetVersion(ctx, decisionNonceChange, workflow.DefaultVersion, 1) != workflow.DefaultVersion
	targets, err := e.decisionTargets(req)
	if err != nil {
		return model.DecisionResult{}, "", err
	}
	d := &pendingDecision{req: req, targets: targets, checking: check}
	for _, i := range targets {
		d.steps = append(d.steps, e.waitingStep(i))
	}
	e.decisions = append(e.decisions, d)
	by := req.By
	if check {
		if by, err = vouchAct(ctx, e.opts.ControlQueue, req.Nonce, contract.ActDecide); err != nil {
			e.decisions = slices.DeleteFunc(e.decisions, func(p *pendingDecision) bool { return p == d })
			return model.DecisionResult{}, "", err
		}
		d.checking = false
	}
	if err := workflow.Await(ctx, func() bool { return d.applied }); err != nil {
		return model.DecisionResult{}, "", err
	}
	res := model.DecisionResult{Action: req.Action, Steps: d.steps}
	if len(d.steps) == 1 {
		res.Step = d.steps[0]
	}
	if req.Action == model.DecisionRollback || req.Action == model.DecisionAbort {
		res.Scope = model.DecisionScopeExecution
	} else {
		res.Scope = model.DecisionScopeSteps
	}
	return res, by, nil
}

// waitingStep names the step waiting unit i waits on: its first failed
// step (or one whose outcome is unknown), or the unit's own step when it
// failed as a whole.
func (e *Executor) waitingStep(i int) string {
	for _, r := range e.state[i].results {
		if r.Outcome == model.OutcomeFailed || r.Outcome == model.OutcomeUnknown {
			return r.StepID
		}
	}
	return e.units[i].Step
}

// decisionTargets picks the waiting units a decision applies to, leaving
// out units already targeted by a decision not yet applied: the first
// waiting unit when the request names no step, the unit of Step, the units
// of every one of Steps (all or nothing: one step not waiting refuses the
// decision), or every waiting unit with All. The units, and the waiting
// steps a refusal lists, come in unit order.
func (e *Executor) decisionTargets(req model.DecisionRequest) ([]int, error) {
	if err := req.CheckTarget(); err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	for _, d := range e.decisions {
		if !d.applied {
			for _, i := range d.targets {
				taken[i] = true
			}
		}
	}
	var waiting []int
	for _, i := range e.sched.Held() {
		if !taken[i] {
			waiting = append(waiting, i)
		}
	}
	if len(waiting) == 0 {
		return nil, errors.New("no step is waiting for a decision")
	}
	switch {
	case req.All:
		return slices.Sorted(slices.Values(waiting)), nil
	case req.Step == "" && len(req.Steps) == 0:
		return waiting[:1], nil
	}
	named := req.Steps
	if req.Step != "" {
		named = []string{req.Step}
	}
	var targets []int
	var missing []string
	for _, step := range named {
		k := slices.IndexFunc(waiting, func(i int) bool { return e.unitHasStep(i, step) })
		if k < 0 {
			missing = append(missing, step)
		} else if !slices.Contains(targets, waiting[k]) {
			targets = append(targets, waiting[k])
		}
	}
	if len(missing) > 0 {
		var names []string
		for _, i := range slices.Sorted(slices.Values(waiting)) {
			names = append(names, e.waitingStep(i))
		}
		what := fmt.Sprintf("step %q is", missing[0])
		if len(missing) > 1 {
			what = fmt.Sprintf("steps %s are", quoteAll(missing))
		}
		return nil, fmt.Errorf("%s not waiting for a decision (waiting: %s)", what, strings.Join(names, ", "))
	}
	slices.Sort(targets)
	return targets, nil
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for k, s := range ss {
		q[k] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func (e *Executor) unitHasStep(i int, step string) bool {
	if e.units[i].Step == step {
		return true
	}
	for _, r := range e.state[i].results {
		if r.StepID == step {
			return true
		}
	}
	return false
}

func (e *Executor) hasDecision() bool {
	for _, d := range e.decisions {
		if !d.applied {
			return !d.checking // the oldest goes first
		}
	}
	return false
}

// applyDecision applies the oldest queued decision to each unit it names,
// in unit order. Rollback and abort stop the whole execution: the first
// unit still waiting takes them, and every other waiting unit fails.
func (e *Executor) applyDecision(ctx workflow.Context) {
	var d *pendingDecision
	for _, p := range e.decisions {
		if !p.applied {
			d = p
			break
		}
	}
	d.applied = true
	e.decisions = slices.DeleteFunc(e.decisions, func(p *pendingDecision) bool { return p.applied })
	for _, i := range d.targets {
		if e.sched.State(i) != dag.Held {
			continue // the unit stopped waiting meanwhile (cancellation)
		}
		if e.decideUnit(i, d.req.Action) {
			return
		}
	}
	if e.sched.Count(dag.Held) == 0 {
		e.to(evAnswered)
	}
}

// decideUnit applies action to waiting unit i; it reports whether the
// action stopped the execution.
func (e *Executor) decideUnit(i int, action model.Decision) (stopped bool) {
	st := &e.state[i]
	msg := st.err
	switch action {
	case model.DecisionRetry:
		e.sched.Retry(i)
	case model.DecisionSkip:
		if failed := e.stepsToSkip(i); len(failed) > 0 {
			for _, id := range failed {
				if !slices.Contains(st.skip, id) {
					st.skip = append(st.skip, id)
				}
			}
			e.sched.Retry(i)
		} else {
			e.sched.Skip(i)
		}
	case model.DecisionRollback:
		e.sched.Abandon(i)
		e.failed(i, msg)
		e.to(evRollback)
		e.failWaiting()
		return true
	case model.DecisionAbort:
		e.sched.Abandon(i)
		e.failed(i, msg)
		e.halt.aborted = true
		e.to(evStop)
		e.failWaiting()
		return true
	}
	return false
}

// stepsToSkip returns the failed steps of waiting unit i when its last
// run left some of its other steps unrun (blocked by a failed step, or
// missing from the results): skipping then means running the unit again
// without them. A step whose outcome is unknown is skipped the same way,
// always: the unit's next run records it as done. It returns nil when
// skipping means skipping the unit.
func (e *Executor) stepsToSkip(i int) []string {
	results := e.state[i].results
	if len(results) == 0 {
		return nil // failed as a whole: nothing says which steps ran
	}
	unrun := len(results) < e.units[i].Count
	var failed []string
	for _, r := range results {
		if r.Blocked != "" {
			unrun = true
		}
		switch r.Outcome {
		case model.OutcomeFailed:
			failed = append(failed, r.StepID)
		case model.OutcomeUnknown:
			failed = append(failed, r.StepID)
			unrun = true
		}
	}
	if !unrun {
		return nil
	}
	return failed
}

// failWaiting ends the other waiting units once the run stops.
func (e *Executor) failWaiting() {
	for _, w := range e.sched.Held() {
		e.sched.Abandon(w)
		e.failed(w, e.state[w].err)
	}
}
