package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// A unit runs as one activity on its node's task queue: ApplyStep for a
// single step, ApplyBatch for several. When the activity returns, the unit
// succeeds (or is skipped, when nothing in it ran), or fails and OnFailure
// decides what follows: fail_on_error false makes the failure a skip, a
// group's fault tolerance lets the run go on, pause holds the unit for an
// operator's decision, and otherwise the run stops or rolls back.

// completion is a unit's finished activity, waiting for the run loop.
type completion struct {
	unit int
	res  contract.UnitResult
	err  error
}

// launch starts the units the scheduler hands out while the run is
// running: not while it waits for a decision or drains.
func (e *Executor) launch(actCtx, loopCtx workflow.Context) {
	if e.phase != phaseRunning {
		return
	}
	for {
		i, ok := e.sched.Next()
		if !ok {
			return
		}
		e.start(actCtx, loopCtx, i)
	}
}

// start runs unit i's activity; its result lands in e.done. A settled
// unit needs none (settle).
func (e *Executor) start(actCtx, loopCtx workflow.Context, i int) {
	u := &e.units[i]
	st := &e.state[i]
	now := workflow.Now(loopCtx)
	st.runs++
	st.startedAt, st.endedAt = &now, nil
	e.touch(i)
	// A noop unit runs even so: it writes the plan of every step.
	if u.Settled != "" && e.opts.Mode != contract.ModeDryRun && !u.Meta.Noop {
		e.settle(i, now)
		return
	}
	name := contract.ApplyStepName
	if u.Batch {
		name = contract.ApplyBatchName
	}
	in := contract.UnitInput{
		ExecutionID: e.opts.ExecutionID,
		Cluster:     e.opts.Cluster,
		Unit:        u.ForActivity(),
		Noop:        e.opts.Mode == contract.ModeDryRun || u.Meta.Noop,
		SkipGuards:  e.opts.Mode == contract.ModeDryRun && !e.opts.RunGuards,
		Rerun:       st.runs > 1,
		Skip:        st.skip,
		Refresh:     e.refreshed(u),
		// complete holds a unit with a step whose outcome is unknown.
		HoldsUnknown: true,
	}
	ao := e.opts.stepActivityOptions(u)
	if id, ok := unknownStep(st.results); ok {
		ao.Summary = unknownSummary(u.Summary, id, in.Skip)
	}
	fut := workflow.ExecuteActivity(workflow.WithActivityOptions(actCtx, ao), name, in)
	workflow.Go(loopCtx, func(c workflow.Context) {
		var res contract.UnitResult
		err := fut.Get(c, &res)
		res.Expand()
		e.done = append(e.done, completion{unit: i, res: res, err: err})
	})
}

// settle ends unit i, whose steps are all known to be skipped before they
// run (contract.Unit.Settled), without an activity: each step the unit
// names is skipped for the unit's reason, and its dependents go on at once,
// in the same workflow task, as after any skip. A dependency level of
// skipped tasks costs a fleet no dispatch.
func (e *Executor) settle(i int, now time.Time) {
	u := &e.units[i]
	st := &e.state[i]
	st.endedAt = &now
	e.seq++
	st.seq = e.seq
	ids := u.Steps
	if len(ids) == 0 && u.Count <= 1 {
		ids = []string{u.Step}
	}
	st.results = make([]contract.StepResult, len(ids))
	for k, id := range ids {
		st.results[k] = contract.StepResult{StepID: id, Action: model.ActionNoop, Outcome: model.OutcomeSkipped,
			Changes: []model.AttrChange{{Path: "skipped", New: u.Settled}}}
	}
	e.sched.Skip(i)
}

// complete takes in one finished unit: its results or error, its
// compensation registered in the saga beside them (what a rollback would
// undo of it), then what follows for the run (succeed, skip or fail).
func (e *Executor) complete(ctx workflow.Context, c completion) {
	i := c.unit
	u := &e.units[i]
	st := &e.state[i]
	now := workflow.Now(ctx)
	st.endedAt = &now
	e.seq++
	st.seq = e.seq
	e.touch(i)
	if c.err != nil {
		st.attempts += failedAttempts(c.err)
		msg := e.describe(u, c.err)
		st.err = msg
		st.results = nil
		// A unit that failed as a whole may have changed something,
		// unless its step says it left nothing to undo.
		e.saga.failedAsAWhole(i, nothingToUndo(c.err))
		if isCancellation(c.err) {
			st.cancelled = true
			e.sched.Abandon(i)
			return
		}
		e.fail(i, msg)
		return
	}
	st.attempts += max(c.res.Attempt, 1)
	st.results = c.res.Steps
	e.saga.ran(i, c.res.Steps)
	st.err = ""
	for _, r := range c.res.Steps {
		if r.Outcome == model.OutcomeFailed {
			st.err = stepError(r.StepID, r.Error)
			break
		}
	}
	if e.holdUnknown(ctx, i) {
		return
	}
	switch {
	case st.err != "":
		e.fail(i, st.err)
	case allSkipped(c.res.Steps):
		// Condition false, task not selected: nothing ran.
		e.sched.Skip(i)
	default:
		e.sched.Succeed(i)
	}
}

// allSkipped reports whether a unit returned results and all were skipped.
func allSkipped(steps []contract.StepResult) bool {
	for _, r := range steps {
		if r.Outcome != model.OutcomeSkipped {
			return false
		}
	}
	return len(steps) > 0
}

// fail handles a unit that failed after its retries: skipped with
// fail_on_error false, within its group's tolerance, held for a decision
// under OnFailure pause (unless the run drains), or failed.
func (e *Executor) fail(i int, msg string) {
	if e.units[i].ContinueOnError {
		e.sched.Skip(i)
		return
	}
	hold := e.opts.OnFailure == model.OnFailurePause && !e.phase.drains()
	if e.sched.Fail(i, hold) {
		e.state[i].tolerated = true
		return
	}
	if e.sched.State(i) == dag.Held {
		e.to(evHeld)
		return
	}
	e.failed(i, msg)
}

// failed records the cause of a definitive failure and applies OnFailure;
// the scheduler has already failed the unit and its dependents.
func (e *Executor) failed(i int, msg string) {
	if e.halt.cause == "" {
		// A step's failure names its step; an activity's, its unit.
		cause := msg
		if len(e.state[i].results) == 0 {
			cause = e.units[i].Summary + ": " + msg
		}
		if g := e.units[i].Group; g != "" {
			if n, limit, ok := e.sched.Failures(g); ok && n > 0 {
				cause = fmt.Sprintf("group %s: %d nodes failed, fault_tolerance allows %d (first failure: %s)",
					g, n, limit, cause)
			}
		}
		e.halt.cause = cause
	}
	switch e.opts.OnFailure {
	case model.OnFailureRollback:
		e.to(evRollback)
	case model.OnFailureStop, model.OnFailurePause:
		e.to(evStop)
	}
}
