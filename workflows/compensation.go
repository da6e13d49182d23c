package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A rollback is a saga's compensation: every unit that changed something
// (or may have: one interrupted, or failed as a whole without saying it
// left nothing to undo) runs one Compensate activity, which undoes the
// unit's changed steps in reverse order within the unit. Units go in reverse dependency order — a unit only after every
// unit that depended on it, even through units that changed nothing — most
// recently completed first, Parallelism at once. It runs on a disconnected
// context, so a cancelled execution still rolls back.

// saga holds every unit's compensation, registered as the unit completes
// and replaced by its next run: the steps its last run changed, or every
// step when which changed is unknown. Cost: one entry per unit.
type saga struct {
	undo []compensation
}

// compensation is what undoing one unit takes.
type compensation struct {
	registered bool
	// all marks a unit interrupted or failed as a whole: which of its
	// steps changed is unknown, so the compensation checks every step. A
	// unit whose failed step reported nothing to undo is not marked; a
	// later run that returns results keeps the mark.
	all   bool
	steps []string // the steps the unit's last run changed
}

func newSaga(units int) saga { return saga{undo: make([]compensation, units)} }

// ran registers the compensation of unit i, whose run returned results:
// the steps that changed.
func (s *saga) ran(i int, results []contract.StepResult) {
	c := &s.undo[i]
	c.registered, c.steps = true, nil
	for _, r := range results {
		if r.Changed() {
			c.steps = append(c.steps, r.StepID)
		}
	}
}

// failedAsAWhole registers the compensation of unit i, whose activity
// failed: every step, unless its step said it left nothing to undo.
func (s *saga) failedAsAWhole(i int, nothingToUndo bool) {
	c := &s.undo[i]
	c.registered, c.all, c.steps = true, !nothingToUndo, nil
}

// undoEverything registers every unit's compensation as every step's.
func (s *saga) undoEverything() {
	for i := range s.undo {
		s.undo[i] = compensation{registered: true, all: true}
	}
}

// pending lists the units with something to undo, in index order, and
// the steps to undo of each (nil: every step).
func (s *saga) pending() (units []int, steps [][]string) {
	steps = make([][]string, len(s.undo))
	for i, c := range s.undo {
		switch {
		case !c.registered:
		case c.all:
			units = append(units, i)
		case len(c.steps) > 0:
			units = append(units, i)
			steps[i] = c.steps
		}
	}
	return units, steps
}

// compensate runs the compensations the saga holds and moves the run to
// rolled back, or done when nothing had changed.
func (e *Executor) compensate(ctx workflow.Context) {
	subset, stepIDs := e.saga.pending()
	if len(subset) == 0 {
		e.to(evNothingToUndo)
		return
	}
	defer e.to(evUndone)
	order := e.sched.Reverse(subset, e.opts.Parallelism, func(a, b int) bool {
		return e.state[a].seq > e.state[b].seq // most recently completed first
	})
	type undone struct {
		unit int
		res  contract.CompensateOutput
		err  error
	}
	var finished []undone
	for !order.Finished() {
		for {
			i, ok := order.Next()
			if !ok {
				break
			}
			u := &e.units[i]
			in := contract.CompensateInput{ExecutionID: e.opts.ExecutionID, Cluster: e.opts.Cluster, Unit: u.ForActivity(), StepIDs: stepIDs[i]}
			fut := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, e.opts.compensationOptions(u)), contract.CompensateName, in)
			workflow.Go(ctx, func(c workflow.Context) {
				var res contract.CompensateOutput
				err := fut.Get(c, &res)
				finished = append(finished, undone{unit: i, res: res, err: err})
			})
		}
		if err := workflow.Await(ctx, func() bool { return len(finished) > 0 }); err != nil {
			return
		}
		for _, f := range finished {
			e.takeCompensation(f.unit, f.res, f.err)
			order.Done(f.unit)
		}
		finished = finished[:0]
	}
}

// takeCompensation records one unit's compensation: what failed, what
// cannot be undone, and which objects came back under new ids.
func (e *Executor) takeCompensation(i int, res contract.CompensateOutput, err error) {
	u := &e.units[i]
	if err != nil {
		e.compFailures = append(e.compFailures, model.StepError{Step: u.Step, Error: "compensation: " + ErrorMessage(err)})
		return
	}
	for step, id := range res.Recreated {
		if e.recreated == nil {
			e.recreated = map[string]string{}
		}
		e.recreated[step] = id
	}
	st := &e.state[i]
	undone := false
	for _, r := range res.Steps {
		switch {
		case r.Error != "":
			e.compFailures = append(e.compFailures, model.StepError{Step: r.StepID, Error: r.Error})
		case r.Irreversible:
			e.compFailures = append(e.compFailures, model.StepError{Step: r.StepID, Error: "irreversible: nothing undoes it"})
		case r.Undone:
			undone = true
			if st.undone == nil {
				st.undone = map[string]bool{}
			}
			st.undone[r.StepID] = true
		}
	}
	if undone && e.status(i) == model.StatusSucceeded {
		st.rolledBack = true
	}
	if undone {
		e.touch(i)
	}
}

// CompensateAll undoes every change any step of the units recorded, for a
// shard that completed before a later shard failed: every unit counts as
// succeeded (as it did in the shard's run) and is undone step by step.
func (e *Executor) CompensateAll(ctx workflow.Context) *Outcome {
	for {
		var started []int
		for i, ok := e.sched.Next(); ok; i, ok = e.sched.Next() {
			started = append(started, i)
		}
		if len(started) == 0 {
			break
		}
		for _, i := range started {
			e.sched.Succeed(i)
		}
	}
	for i := range e.state {
		e.state[i].seq = i + 1 // latest first: the reverse of the units' order
	}
	e.saga.undoEverything()
	e.to(evUndoAll)
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	e.compensate(dctx)
	rolledBack := e.phase == phaseRolledBack
	e.final = &Outcome{RolledBack: rolledBack}
	e.final.Report.CompensationFailures = e.compFailures
	e.final.Report.RolledBack = rolledBack
	return e.final
}
