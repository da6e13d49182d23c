package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// With OnFailure pause a failed unit waits, and nothing new starts, until
// an operator answers with the "decision" Update: retry runs the unit
// again; skip lets its dependents run (or, when the failure kept steps of
// the unit from running, runs the unit again without the failed steps);
// rollback and abort fail it and stop, rollback compensating what was done.

// pendingDecision is a decision the Update handler queued for the run loop.
type pendingDecision struct {
	req     model.DecisionRequest
	target  int
	applied bool
}

// ValidateDecision accepts a decision only while a step waits for one.
func (e *Executor) ValidateDecision(req model.DecisionRequest) error {
	switch req.Action {
	case model.DecisionRetry, model.DecisionSkip, model.DecisionRollback, model.DecisionAbort:
	default:
		return fmt.Errorf("unknown decision %q: want retry, skip, rollback or abort", req.Action)
	}
	if _, err := e.decisionTarget(req.Step); err != nil {
		return err
	}
	return nil
}

// Decide is the decision Update handler: it queues the decision for the run
// loop and returns once the loop applied it.
func (e *Executor) Decide(ctx workflow.Context, req model.DecisionRequest) (model.DecisionResult, error) {
	target, err := e.decisionTarget(req.Step)
	if err != nil {
		return model.DecisionResult{}, err
	}
	step := e.waitingStep(target)
	d := &pendingDecision{req: req, target: target}
	e.decisions = append(e.decisions, d)
	if err := workflow.Await(ctx, func() bool { return d.applied }); err != nil {
		return model.DecisionResult{}, err
	}
	return model.DecisionResult{Step: step, Action: req.Action}, nil
}

// waitingStep names the step waiting unit i waits on: its first failed
// step, or the unit's own step when it failed as a whole.
func (e *Executor) waitingStep(i int) string {
	for _, r := range e.state[i].results {
		if r.Outcome == model.OutcomeFailed {
			return r.StepID
		}
	}
	return e.units[i].Step
}

// decisionTarget picks the waiting unit a decision applies to, leaving out
// units already targeted by a decision not yet applied.
func (e *Executor) decisionTarget(step string) (int, error) {
	taken := map[int]bool{}
	for _, d := range e.decisions {
		if !d.applied {
			taken[d.target] = true
		}
	}
	var names []string
	for _, i := range e.sched.Held() {
		if taken[i] {
			continue
		}
		if step == "" || e.unitHasStep(i, step) {
			return i, nil
		}
		names = append(names, e.waitingStep(i))
	}
	if len(names) == 0 {
		return 0, errors.New("no step is waiting for a decision")
	}
	return 0, fmt.Errorf("step %q is not waiting for a decision (waiting: %s)", step, strings.Join(names, ", "))
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
			return true
		}
	}
	return false
}

// applyDecision applies the oldest queued decision.
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
	i := d.target
	if e.sched.State(i) != dag.Held {
		return // the unit stopped waiting meanwhile (cancellation)
	}
	st := &e.state[i]
	msg := st.err
	switch d.req.Action {
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
		return
	case model.DecisionAbort:
		e.sched.Abandon(i)
		e.failed(i, msg)
		e.halt.aborted = true
		e.to(evStop)
		e.failWaiting()
		return
	}
	if e.sched.Count(dag.Held) == 0 {
		e.to(evAnswered)
	}
}

// stepsToSkip returns the failed steps of waiting unit i when its last
// run left some of its other steps unrun (blocked by a failed step, or
// missing from the results): skipping then means running the unit again
// without them. It returns nil when skipping means skipping the unit.
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
		if r.Outcome == model.OutcomeFailed {
			failed = append(failed, r.StepID)
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
