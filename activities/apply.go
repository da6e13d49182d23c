package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/stepdata"
)

// ApplyStep converges one step (reads, diffs and applies in one go), or
// plans it with Noop. A provider failure fails the activity so Temporal
// retries it by the step's meta params; configuration errors are never
// retried. A step its stopping worker cut off is handed back (see
// liveness.Interceptor), never failed.
func (a *Activities) ApplyStep(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	if err := a.checkPlacement(in.Cluster, in.Unit, nil); err != nil {
		return nil, err
	}
	var step planner.StoredStep
	if err := a.loadJSON(ctx, in.ExecutionID, in.Unit.Step, contract.DataStep, &step); err != nil {
		return nil, fmt.Errorf("load step %s: %w", in.Unit.Step, err)
	}
	if err := a.checkPlacement(in.Cluster, in.Unit, []*planner.StoredStep{&step}); err != nil {
		return nil, err
	}
	runs, err := a.converge(ctx, in, []*planner.StoredStep{&step}, false)
	if err != nil {
		return nil, err
	}
	r := runs[0]
	n := liveness.Attempt(ctx)
	if r.res.Outcome == model.OutcomeFailed && !in.Noop {
		details := contract.FailureDetails{StepID: step.ID, Attempt: n, NothingToUndo: r.nothingToUndo()}
		if r.unknown {
			// An executor that does not hold unknown steps: failed, and
			// never retried (a retry would find it unknown again).
			return nil, temporal.NewNonRetryableApplicationError(r.res.Error, contract.StepFailedType, nil, details)
		}
		if providers.IsConfigError(r.err) || isConfig(r.err) {
			return nil, configError(r.res.Error, details)
		}
		// The step's own retry budget is spent: later attempts are for
		// workers that die, not for failures.
		if step.Meta.Retry >= 0 && n > step.Meta.Retry {
			return nil, temporal.NewNonRetryableApplicationError(r.res.Error, contract.StepFailedType, nil, details)
		}
		return nil, temporal.NewApplicationError(r.res.Error, contract.StepFailedType, details)
	}
	budget := stepdata.StepChangeBudget
	r.res.Changes = stepdata.Spend(r.res.Changes, &budget)
	return &contract.UnitResult{Steps: []contract.StepResult{r.res}, Attempt: n}, nil
}

// ApplyBatch converges a batch unit's steps and reports each one's own
// result; one step failing does not fail the others.
func (a *Activities) ApplyBatch(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	if err := a.checkPlacement(in.Cluster, in.Unit, nil); err != nil {
		return nil, err
	}
	var steps []*planner.StoredStep
	if err := a.loadJSON(ctx, in.ExecutionID, contract.UnitKey(in.Unit.Index), contract.DataUnit, &steps); err != nil {
		return nil, fmt.Errorf("load unit %d: %w", in.Unit.Index, err)
	}
	if err := a.checkPlacement(in.Cluster, in.Unit, steps); err != nil {
		return nil, err
	}
	runs, err := a.converge(ctx, in, steps, true)
	if err != nil {
		return nil, err
	}
	out := &contract.UnitResult{Attempt: liveness.Attempt(ctx), Steps: make([]contract.StepResult, len(runs))}
	budget := stepdata.BatchChangeBudget
	for i, r := range runs {
		out.Steps[i] = r.res
		out.Steps[i].Changes = stepdata.Spend(r.res.Changes, &budget)
		// Object ids are in the store for the record; 100 paths per batch
		// would only fatten history.
		out.Steps[i].ObjectID = ""
	}
	out.Compact()
	return out, nil
}

// converge runs a unit's steps through resolve, plan, record-before, apply
// and record-outputs, each step once the steps it depends on in the unit
// succeeded (or were skipped): in waves of the steps ready together, which
// plan and apply StepConcurrency at a time and share one store write for
// their before-states. A step whose dependency in the unit failed does not
// run and says which one (Blocked). Store failures fail the activity (to
// be retried); step failures are in each run's result.
//
// Durability: a before-state is in the store before its change is made;
// a command (an action that runs something) has its outcome recorded as
// soon as it ran, so a retried attempt resumes after it and never runs it
// twice; every other step's outcome is recorded once at the end. A
// command that is not safe to repeat also has a start marker in the store
// before it runs (one more write): a retried attempt that finds it without
// an outcome reports the step unknown instead of running it (unknown.go). When
// the worker stops, no step starts any more: the steps running finish
// (within the drain, see liveness.Interceptor), commands among them are recorded, and
// the unit returns errHandBack so another worker resumes it; a step the
// stop cut off is never reported as failed. With
// deferSync the steps' writes skip their own fsyncs and are made durable
// together before those outcomes are recorded or returned.
func (a *Activities) converge(ctx context.Context, in contract.UnitInput, steps []*planner.StoredStep, deferSync bool) ([]*stepRun, error) {
	// No command outlives the attempt's ownership (see liveness.Fence).
	ctx = providers.WithKillBy(ctx, liveness.OwnedUntil(ctx))
	u := newUnitRun(steps)
	u.refreshFrom(in)
	// A retried attempt (or an operator's retry) may find steps an earlier
	// attempt already converged, or began to change.
	if !in.Noop && (liveness.RawAttempt(ctx) > 1 || in.Rerun) {
		if err := a.recall(ctx, in.ExecutionID, u.runs); err != nil {
			return nil, err
		}
		u.settleUnknown(startedBy(ctx), in.Skip, in.HoldsUnknown)
	}
	u.skip(in.Skip)
	applyCtx := ctx
	var pending *providers.DeferredSync
	if deferSync && !in.Noop {
		pending = providers.NewDeferredSync()
		applyCtx = providers.WithDeferredSync(ctx, pending)
	}
	t0 := time.Now()
	if err := a.planAhead(ctx, in, u); err != nil {
		return nil, err
	}
	waves := 0
	for wave := u.ready(); len(wave) > 0; wave = u.ready() {
		if liveness.Stopping(ctx) {
			// The rest of the unit moves to another worker at once.
			return nil, errHandBack
		}
		waves++
		if err := a.runWave(ctx, applyCtx, in, u, wave); err != nil {
			return nil, err
		}
	}
	tRan := time.Now()
	if in.Noop {
		return u.runs, a.recordPlan(ctx, in.ExecutionID, u.runs)
	}
	if pending != nil {
		// Nothing is reported as changed before it is on disk: failing
		// here fails the attempt, and the next one finds the changes made.
		if err := pending.Sync(ctx); err != nil {
			return nil, err
		}
	}
	tSynced := time.Now()
	if err := a.recordOutputs(ctx, in.ExecutionID, u.runs); err != nil {
		return nil, err
	}
	a.log.Debug("converged", "execution", in.ExecutionID, "steps", len(u.runs), "waves", waves,
		"run", tRan.Sub(t0), "sync", tSynced.Sub(tRan), "record", time.Since(tSynced))
	return u.runs, nil
}

// planAhead plans, all at once, the steps whose state no earlier step of
// the unit can change (see unitRun.plannableAhead), and keeps their
// before-states in one write: a chain of files costs one store write, not
// one per link.
func (a *Activities) planAhead(ctx context.Context, in contract.UnitInput, u *unitRun) error {
	ahead := u.plannableAhead()
	if len(ahead) == 0 {
		return nil
	}
	a.each(ahead, func(r *stepRun) { a.plan(ctx, in, u, r) })
	if in.Noop {
		return nil
	}
	return a.keepBefores(ctx, in.ExecutionID, ahead)
}

// runWave plans and applies steps that are ready together.
func (a *Activities) runWave(ctx, applyCtx context.Context, in contract.UnitInput, u *unitRun, wave []*stepRun) error {
	a.each(wave, func(r *stepRun) {
		if !r.planned {
			a.plan(ctx, in, u, r)
		}
	})
	if in.Noop {
		u.finish(wave)
		return nil
	}
	if err := a.keepBefores(ctx, in.ExecutionID, wave); err != nil {
		return err
	}
	a.applyBatches(applyCtx, wave)
	var cut atomic.Bool
	var markErr error
	var markOnce sync.Once
	a.each(wave, func(r *stepRun) {
		if r.done {
			return
		}
		if liveness.Stopping(ctx) {
			cut.Store(true) // not started: it runs on the next worker
			return
		}
		if a.repeatUnsafe(r) {
			if err := a.markStarted(ctx, in.ExecutionID, r); err != nil {
				markOnce.Do(func() { markErr = err })
				return // not started: the attempt fails and a retry runs it
			}
		}
		a.apply(applyCtx, r)
	})
	var commands []*stepRun
	for _, r := range wave {
		if r.applied && r.res.Action == model.ActionRun {
			commands = append(commands, r)
		}
	}
	// A command that ran is recorded even when the activity is being
	// cancelled or handed back: its retry must find it done, not run it
	// again. Not once the attempt is fenced off: it may be another's by
	// then (liveness.Owned).
	owned, release := liveness.Owned(ctx)
	defer release()
	recordCtx, cancel := context.WithTimeout(owned, commandRecordTimeout)
	defer cancel()
	if err := a.recordOutputs(recordCtx, in.ExecutionID, commands); err != nil {
		return err
	}
	if cut.Load() || (liveness.Stopping(ctx) && applyCtx.Err() != nil) {
		// Steps left out, or cancelled by the stop and failed for it: a
		// command the stop cut off keeps its start marker without an
		// outcome, and is unknown on the next worker.
		return errHandBack
	}
	if markErr != nil {
		return markErr
	}
	if err := a.endStarted(recordCtx, in.ExecutionID, wave); err != nil {
		return err
	}
	u.finish(wave)
	return nil
}

// commandRecordTimeout bounds the write of the outcomes of commands that
// ran, which the activity's cancellation does not stop.
const commandRecordTimeout = 30 * time.Second

// errHandBack ends a unit its stopping worker hands back.
var errHandBack = fmt.Errorf("unit handed back: %w", contract.ErrWorkerStopping)

// each runs fn over the runs, a batch's steps StepConcurrency at a time:
// they are independent of each other, and a file's write waits mostly on
// the disk.
func (a *Activities) each(runs []*stepRun, fn func(*stepRun)) {
	workers := min(a.d.StepConcurrency, len(runs))
	if workers <= 1 {
		for _, r := range runs {
			fn(r)
		}
		return
	}
	next := make(chan *stepRun)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for r := range next {
				fn(r)
			}
		})
	}
	for _, r := range runs {
		next <- r
	}
	close(next)
	wg.Wait()
}

// plan resolves a step's spec and reads and diffs it (a noop Converge).
func (a *Activities) plan(ctx context.Context, in contract.UnitInput, u *unitRun, r *stepRun) {
	r.planned = true
	s := r.step
	if s.Skipped {
		r.skip("not selected")
		return
	}
	spec, ectx, err := a.resolve(ctx, in.ExecutionID, u, r, in.Noop)
	if err != nil {
		r.fail(err)
		return
	}
	if s.Condition != "" {
		ok, err := expr.Condition(s.Condition, ectx)
		if err != nil {
			r.fail(&providers.ConfigError{Attr: "condition", Err: err})
			return
		}
		if !ok {
			r.skip("condition is false")
			return
		}
	}
	r.req = providers.Request{
		Kind: s.Base, Name: s.Name, Spec: spec, Node: a.node(s),
		ObjectID: s.ObjectID, Delete: s.Delete, Noop: true,
		Intent: intentKey(in.ExecutionID, s.ID),
		// The before record is the intent: one that says create, without
		// an outcome, is a create an earlier attempt may have made.
		Resumed: r.prior != nil && r.prior.Action == model.ActionCreate,
		// Outside a dry-run, the plan is the apply's read: guards run.
		SkipGuards: in.Noop && in.SkipGuards,
		Refresh:    u.refreshed(r),
		Secrets:    r.secrets,
		Verbose:    r.verbose,
		TestPre:    s.TestPre,
		TestPost:   s.TestPost,
	}
	ch, err := a.d.Registry.Converge(ctx, r.req)
	r.plan = ch
	if err != nil {
		r.fail(err)
		return
	}
	r.res.Action = ch.Action
	r.res.Outcome = model.OutcomeUnchanged
	r.res.Refreshed = ch.Refreshed
	r.res.ObjectID = cmp.Or(ch.After.ID, ch.Before.ID, s.ObjectID)
	r.res.Changes = stepdata.Show(ch.Changes, r.secrets, stepdata.ShownValue)
	if in.Noop {
		r.req.Noop = true
		r.done = true
		return
	}
	r.req.Noop = s.Meta.Noop
	if ch.Action == model.ActionNoop || s.Meta.Noop {
		r.res.Outcome = model.OutcomeUnchanged
		if r.prior != nil {
			// An earlier attempt made the change and stopped before
			// recording it: the change is this execution's.
			r.res.Action, r.res.Outcome = r.prior.Action, stepdata.OutcomeOf(r.prior.Action)
		}
		r.done = true
	}
}

// apply makes the change planned for r.
func (a *Activities) apply(ctx context.Context, r *stepRun) {
	r.req.Noop = false
	r.applied = true
	// The plan has just read the object and its Before is what was
	// recorded for compensation: the change is made against that state,
	// without reading the object a second time.
	req := r.req
	before := r.plan.Before
	req.Have = &before
	ch, err := a.d.Registry.Converge(ctx, req)
	if err != nil {
		r.fail(err)
		return
	}
	r.plan.After = ch.After
	r.res.Action, r.res.Outcome, r.res.Refreshed = ch.Action, ch.Outcome, ch.Refreshed
	if r.prior != nil && (ch.Action == model.ActionNoop || r.req.Resumed) {
		// An earlier attempt made the change (a create found again may
		// still have needed its links): it is this execution's.
		r.res.Action, r.res.Outcome = r.prior.Action, stepdata.OutcomeOf(r.prior.Action)
	}
	r.res.ObjectID = cmp.Or(ch.After.ID, ch.Before.ID, r.step.ObjectID)
	if len(ch.Changes) > 0 {
		r.res.Changes = stepdata.Show(ch.Changes, r.secrets, stepdata.ShownValue)
	}
	if ch.After.Log != "" {
		// What the change printed, bounded by the kind, redacted of the
		// secrets the spec used: shown with the step, never an output.
		r.res.Changes = append(r.res.Changes, model.AttrChange{Path: model.OutputChange, New: r.redact(ch.After.Log)})
	}
	a.log.Debug("step converged", "step", r.step.ID, "action", ch.Action, "outcome", ch.Outcome)
}

// node is where the provider acts for step s: this worker's node.
func (a *Activities) node(s *planner.StoredStep) providers.Node {
	n := a.d.Node
	if n.Name == "" {
		n.Name = stepdata.NodeName(s.Node)
	}
	return n
}

// isConfig reports whether err is an activity error no retry can fix.
func isConfig(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == contract.ConfigErrorType
}
