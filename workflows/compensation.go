package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A rollback is a saga's compensation: every unit that changed something
// (or may have: one interrupted, or failed as a whole without saying it
// left nothing to undo) runs one Compensate
// activity, which undoes the unit's changed steps in reverse order within
// the unit. Units go in reverse dependency order — a unit only after every
// unit that depended on it, even through units that changed nothing — most
// recently completed first, Parallelism at once. It runs on a disconnected
// context, so a cancelled execution still rolls back.

// compensate undoes every done change of the run.
func (e *Executor) compensate(ctx workflow.Context) {
	var subset []int
	stepIDs := make([][]string, len(e.units))
	for i := range e.units {
		st := &e.state[i]
		if st.runs == 0 {
			continue
		}
		if st.uncertain {
			subset = append(subset, i) // nil step ids: every step
			continue
		}
		for _, r := range st.results {
			if r.Changed() {
				stepIDs[i] = append(stepIDs[i], r.StepID)
			}
		}
		if len(stepIDs[i]) > 0 {
			subset = append(subset, i)
		}
	}
	if len(subset) == 0 {
		return
	}
	e.rolledBack = true
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
			in := contract.CompensateInput{ExecutionID: e.opts.ExecutionID, Cluster: e.opts.Cluster, Unit: *u, StepIDs: stepIDs[i]}
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
}

// CompensateAll undoes every change any step of the units recorded, for a
// shard that completed before a later shard failed.
func (e *Executor) CompensateAll(ctx workflow.Context) *Outcome {
	e.undoing = true
	for i := range e.state {
		st := &e.state[i]
		st.runs, st.uncertain, st.seq = 1, true, i+1
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	e.compensate(dctx)
	e.final = &Outcome{RolledBack: e.rolledBack}
	e.final.Report.CompensationFailures = e.compFailures
	e.final.Report.RolledBack = e.rolledBack
	return e.final
}
