package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/dag"
)

// Run executes the units and returns how it went. It returns an error only
// for a broken workflow, never for failed steps (see Outcome).
//
// It is a saga: each turn starts what the scheduler hands out, waits for a
// unit to finish, a decision or the cancellation, and takes them in; each
// unit's compensation is registered as the unit completes (complete).
// Once nothing runs, waits or is left to start, a run that must roll back
// undoes what the units did, most recent first.
//
// The loop and its activities run on a context that the workflow's
// cancellation does not reach, so in-flight results are still taken in
// and changes can be compensated; a watcher turns cancellation into an
// event of the loop, which cancels the step activities explicitly.
func (e *Executor) Run(ctx workflow.Context) (*Outcome, error) {
	loopCtx, _ := workflow.NewDisconnectedContext(ctx)
	actCtx, cancelActs := workflow.WithCancel(loopCtx)
	cancelRequested := false
	workflow.Go(ctx, func(c workflow.Context) {
		c.Done().Receive(c, nil)
		cancelRequested = true
	})
	cancelPending := func() bool { return cancelRequested && !e.halt.cancelled }

	e.updateDetails(loopCtx)
	for {
		if cancelPending() {
			e.cancel()
			cancelActs()
		}
		e.launch(actCtx, loopCtx)
		if e.idle() {
			break
		}
		if err := workflow.Await(loopCtx, func() bool {
			return len(e.done) > 0 || e.hasDecision() || cancelPending()
		}); err != nil {
			return nil, err
		}
		for len(e.done) > 0 {
			c := e.done[0]
			e.done = e.done[1:]
			e.complete(loopCtx, c)
		}
		for e.hasDecision() {
			e.applyDecision(loopCtx)
		}
		e.updateDetails(loopCtx)
		e.markAwaiting(loopCtx)
	}
	e.markAwaiting(loopCtx) // a cancellation ended the wait
	e.drained()
	if e.phase == phaseCompensating {
		e.compensate(loopCtx)
	}
	e.final = e.outcome()
	e.updateDetails(loopCtx)
	return e.final, nil
}

// idle reports whether the loop has nothing left to wait for: no unit
// runs or waits for a decision, and nothing is left to take in.
func (e *Executor) idle() bool {
	return e.sched.Running() == 0 && e.sched.Count(dag.Held) == 0 && len(e.done) == 0 && len(e.decisions) == 0
}

// cancel stops the run on the workflow's cancellation: nothing new starts,
// units waiting for a decision fail, and an apply rolls back.
func (e *Executor) cancel() {
	e.halt.cancelled = true
	if e.halt.cause == "" {
		e.halt.cause = "execution cancelled"
	}
	for _, i := range e.sched.Held() {
		e.sched.Abandon(i)
	}
	if e.opts.RollbackOnCancel {
		e.to(evRollback)
	} else {
		e.to(evStop)
	}
}

// drained ends the run loop: units never started stay so.
func (e *Executor) drained() {
	e.to(evDrained)
	for i := range e.units {
		if s := e.sched.State(i); s == dag.Pending || s == dag.Ready {
			e.state[i].err = "not started: the execution stopped"
		}
	}
}
