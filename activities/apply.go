package activities

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/stepdata"
)

// knownAfterApply stands in, during a dry-run, for a value a dependency
// only has once it is created.
const knownAfterApply = "(known after apply)"

// outputsRecord is a step's outputs record (stepdata.Outputs), under the
// name the graph activities read it by.
type outputsRecord = stepdata.Outputs

// stepRun is one step going through an activity.
type stepRun struct {
	step    *planner.StoredStep
	req     providers.Request
	secrets []string // secret values the spec uses, to redact
	missing expr.Missing
	// verbose is the execution's verbose option, for kinds that run
	// programs (set by resolve).
	verbose bool
	// prior is the before-state an earlier attempt recorded.
	prior *stepdata.Before
	plan  providers.Change
	res   contract.StepResult
	err   error
	done  bool
	// recalled marks a step an earlier attempt finished and recorded;
	// recorded one whose outcome this attempt has recorded.
	recalled, recorded bool
	// planned: read and diffed; beforeKept: its before-state is stored;
	// applied: its change was attempted.
	planned, beforeKept, applied bool
}

// ApplyStep converges one step (reads, diffs and applies in one go), or
// plans it with Noop. A provider failure fails the activity so Temporal
// retries it by the step's meta params; configuration errors are never
// retried. A step its stopping worker cut off is handed back (see
// Liveness), never failed.
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
	n := attempt(ctx)
	if r.res.Outcome == model.OutcomeFailed && !in.Noop {
		details := contract.FailureDetails{StepID: step.ID, Attempt: n, NothingToUndo: r.nothingToUndo()}
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
	out := &contract.UnitResult{Attempt: attempt(ctx), Steps: make([]contract.StepResult, len(runs))}
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
// twice; every other step's outcome is recorded once at the end. When
// the worker stops, no step starts any more: the steps running finish
// (within the drain, see Liveness), commands among them are recorded, and
// the unit returns errHandBack so another worker resumes it; a step the
// stop cut off is never reported as failed. With
// deferSync the steps' writes skip their own fsyncs and are made durable
// together before those outcomes are recorded or returned.
func (a *Activities) converge(ctx context.Context, in contract.UnitInput, steps []*planner.StoredStep, deferSync bool) ([]*stepRun, error) {
	u := newUnitRun(steps)
	u.refreshFrom(in)
	// A retried attempt (or an operator's retry) may find steps an earlier
	// attempt already converged, or began to change.
	if !in.Noop && (rawAttempt(ctx) > 1 || in.Rerun) {
		if err := a.recall(ctx, in.ExecutionID, u.runs); err != nil {
			return nil, err
		}
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
		if workerStopping(ctx) {
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

// keepBefores writes the before-states of the runs about to change
// something, in one store write.
func (a *Activities) keepBefores(ctx context.Context, execID string, runs []*stepRun) error {
	befores := map[string][]byte{}
	for _, r := range runs {
		if r.done || r.prior != nil || r.beforeKept {
			continue
		}
		raw, unkept, err := stepdata.EncodeBefore(r.plan, a.d.BeforeStateLimit)
		if err != nil {
			return err
		}
		if unkept > 0 {
			r.res.Note = stepdata.NoRollbackNote(unkept, a.d.BeforeStateLimit)
			a.log.Warn("before-state over the limit not kept", "step", r.step.ID, "bytes", unkept, "limit", a.d.BeforeStateLimit)
		}
		befores[r.step.ID] = raw
		r.beforeKept = true
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataBefore, befores)
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
	var cut atomic.Bool
	a.each(wave, func(r *stepRun) {
		if r.done {
			return
		}
		if workerStopping(ctx) {
			cut.Store(true) // not started: it runs on the next worker
			return
		}
		a.apply(applyCtx, r)
	})
	var commands []*stepRun
	for _, r := range wave {
		if r.applied && r.res.Action == model.ActionRun {
			commands = append(commands, r)
		}
	}
	if err := a.recordOutputs(ctx, in.ExecutionID, commands); err != nil {
		return err
	}
	if cut.Load() || (workerStopping(ctx) && applyCtx.Err() != nil) {
		// Steps left out, or cancelled by the stop and failed for it.
		return errHandBack
	}
	u.finish(wave)
	return nil
}

// errHandBack ends a unit its stopping worker hands back.
var errHandBack = fmt.Errorf("unit handed back: %w", contract.ErrWorkerStopping)

// recordOutputs keeps what runs left for the stack record, dependents'
// expressions and retried attempts, each run once.
func (a *Activities) recordOutputs(ctx context.Context, execID string, runs []*stepRun) error {
	outputs := map[string][]byte{}
	for _, r := range runs {
		if r.recalled || r.recorded || r.res.Outcome == model.OutcomeFailed || r.res.Outcome == model.OutcomeSkipped || r.req.Noop {
			continue
		}
		raw, err := json.Marshal(r.outputs())
		if err != nil {
			return err
		}
		outputs[r.step.ID] = raw
		r.recorded = true
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataOutputs, outputs)
}

// outputs is what r leaves for the stack record and its dependents, with
// the secrets its spec used redacted: outputs are stored in clear.
func (r *stepRun) outputs() stepdata.Outputs {
	return stepdata.Outputs{ID: r.res.ObjectID, Outputs: r.redactedOutputs(), Action: r.res.Action, Outcome: r.res.Outcome, Deleted: r.step.Delete, Refreshed: r.res.Refreshed}
}

// redactedOutputs are the outputs of r's object (an exec's stdout that
// printed a secret it was given, an http body echoing one) with the
// secrets its spec used redacted in every string, nested ones included.
func (r *stepRun) redactedOutputs() map[string]any {
	if len(r.secrets) == 0 || r.plan.After.Outputs == nil {
		return r.plan.After.Outputs
	}
	out, _ := expr.RedactValue(r.plan.After.Outputs, r.secrets).(map[string]any)
	return out
}

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

// recall loads what earlier attempts left for the steps.
func (a *Activities) recall(ctx context.Context, execID string, runs []*stepRun) error {
	for _, r := range runs {
		var out stepdata.Outputs
		err := a.loadJSON(ctx, execID, r.step.ID, contract.DataOutputs, &out)
		switch {
		case err == nil:
			r.res.Action, r.res.Outcome, r.res.ObjectID, r.res.Refreshed = out.Action, out.Outcome, out.ID, out.Refreshed
			r.plan.After.ID, r.plan.After.Outputs = out.ID, out.Outputs
			r.done, r.recalled = true, true
			continue
		case !notFound(err):
			return err
		}
		var before stepdata.Before
		err = a.loadJSON(ctx, execID, r.step.ID, contract.DataBefore, &before)
		switch {
		case err == nil:
			r.prior = &before
			if before.Unkept > 0 {
				r.res.Note = stepdata.NoRollbackNote(before.Unkept, a.d.BeforeStateLimit)
			}
		case !notFound(err):
			return err
		}
	}
	return nil
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

// nothingToUndo reports whether a failed step left nothing for Compensate
// to undo: no before-state was recorded (it failed before changing
// anything), or it is a command, which failing did not complete.
func (r *stepRun) nothingToUndo() bool {
	if r.prior == nil && !r.beforeKept {
		return true
	}
	action := r.plan.Action
	if r.prior != nil {
		action = r.prior.Action
	}
	return action == model.ActionRun
}

func (r *stepRun) fail(err error) {
	r.err = err
	r.res.Outcome = model.OutcomeFailed
	// The result names its step: the provider's own "kind/name: " prefix
	// would say it twice.
	msg := strings.TrimPrefix(err.Error(), strings.ToLower(r.req.Kind)+"/"+r.req.Name+": ")
	r.res.Error = expr.Redact(msg, r.secrets)
	r.done = true
}

func (r *stepRun) skip(why string) {
	r.res.Action, r.res.Outcome, r.res.Error = model.ActionNoop, model.OutcomeSkipped, ""
	r.res.Changes = []model.AttrChange{{Path: "skipped", New: why}}
	r.done = true
}

// resolve turns the stored spec into the provider's input: env and secret
// refs and expressions over the dependencies' outputs. Secrets are read
// here, inside the activity, and never leave it.
func (a *Activities) resolve(ctx context.Context, execID string, u *unitRun, r *stepRun, noop bool) (model.Spec, expr.Context, error) {
	s := r.step
	if !s.NeedsResolve() {
		if s.Base == kinds.KindExternal {
			params, err := a.unitParams(ctx, execID, u)
			if err != nil {
				return nil, expr.Context{}, err
			}
			r.verbose = params.Verbose
		}
		return s.Spec, expr.Context{}, nil // nothing to resolve: most files of a batch
	}
	deps := map[string]map[string]any{}
	byID := map[string]map[string]any{}
	for _, d := range planner.Deps(&s.Step) {
		rec, ok := u.outputsOf(d)
		var err error
		if !ok {
			err = a.loadJSON(ctx, execID, d, contract.DataOutputs, &rec)
		}
		if err != nil && !notFound(err) {
			return nil, expr.Context{}, err
		}
		out := rec.DepOutputs()
		if noop && out["id"] == nil {
			out["id"] = knownAfterApply
		}
		if err != nil && !noop {
			continue // the dependency was skipped; expressions over it fail by name
		}
		deps[d] = out
		byID[d] = out
		if base, _, ok := strings.Cut(d, "@"); ok {
			deps[base] = out
		}
		deps[stepdata.StepName(d)] = out
	}
	aliases := stepdata.AliasRecords(s.DepAliases(), byID)
	for alias, rec := range aliases {
		deps[alias] = rec.(map[string]any)
	}
	params, err := a.unitParams(ctx, execID, u)
	if err != nil {
		return nil, expr.Context{}, err
	}
	r.verbose = params.Verbose
	env, lookup := a.lookups(params)
	// The redaction of this step's messages covers the execution's
	// secrets as well as the worker's.
	r.secrets = expr.SecretValues(s.Spec, lookup)
	ectx := expr.Context{
		Env: env, Secret: lookup, Deps: deps, Verbatim: s.Verbatim, Vars: params.Vars,
		Node: map[string]any{"name": stepdata.NodeName(s.Node), "id": stepdata.NodeName(s.Node)},
	}
	if s.Delete {
		return a.resolveForDelete(s.Spec, ectx), ectx, nil
	}
	spec, missing, err := expr.Resolve(s.Spec, ectx)
	r.missing = missing
	r.res.MissingEnv, r.res.MissingSecrets = missing.Env, missing.Secrets
	if err != nil {
		if noop && len(deps) > 0 {
			// Values of dependencies created by the apply are unknown yet.
			return nil, ectx, fmt.Errorf("%s (values of dependencies are known after apply)", err)
		}
		return nil, ectx, &providers.ConfigError{Err: err}
	}
	if !noop && !missing.Empty() {
		var what []string
		for _, k := range missing.Env {
			what = append(what, "env "+k)
		}
		for _, k := range missing.Secrets {
			what = append(what, "secret "+k)
		}
		return nil, ectx, &providers.ConfigError{Err: fmt.Errorf("missing %s", strings.Join(what, ", "))}
	}
	if len(aliases) > 0 {
		spec[kinds.DepAliasAttr] = aliases
	}
	return spec, ectx, nil
}

// resolveForDelete keeps what a delete needs of a spec that left the
// package: the values that still resolve (links to objects that are being
// deleted as well would not).
func (a *Activities) resolveForDelete(spec model.Spec, ectx expr.Context) model.Spec {
	out := model.Spec{}
	for k, v := range spec {
		if k == "links" {
			continue
		}
		if slices.Contains(ectx.Verbatim, k) {
			out[k] = v // a template of its own: the provider renders it
			continue
		}
		val, missing, err := expr.ResolveValue(v, ectx)
		if err != nil || !missing.Empty() {
			continue
		}
		out[k] = val
	}
	return out
}

func (a *Activities) secretLookup() func(string) (string, bool) {
	if a.d.Secrets == nil {
		return func(string) (string, bool) { return "", false }
	}
	return a.d.Secrets.Lookup
}

// node is where the provider acts for step s: this worker's node.
func (a *Activities) node(s *planner.StoredStep) providers.Node {
	n := a.d.Node
	if n.Name == "" {
		n.Name = stepdata.NodeName(s.Node)
	}
	return n
}

// recordPlan keeps a dry-run's plan steps and the outputs of what exists
// (for dependents' expressions in the same dry-run).
func (a *Activities) recordPlan(ctx context.Context, execID string, runs []*stepRun) error {
	plans := map[string][]byte{}
	outputs := map[string][]byte{}
	for _, r := range runs {
		s := r.step
		ps := model.PlanStep{
			ID: s.ID, Kind: s.RecordKind, Name: s.Name, Node: s.Node, Action: r.res.Action,
			Changes: stepdata.Show(r.plan.Changes, r.secrets, stepdata.PlanValue), Error: r.res.Error, Note: stepdata.PlanNote(r.plan, a.d.BeforeStateLimit),
			Refresh: r.res.Refreshed,
		}
		if ps.Action == "" {
			ps.Action = model.ActionNoop
		}
		raw, err := json.Marshal(ps)
		if err != nil {
			return err
		}
		plans[s.ID] = raw
		if s.Exported && r.plan.After.Exists {
			rec := stepdata.Outputs{ID: r.plan.After.ID, Outputs: r.redactedOutputs(), Action: r.res.Action, Outcome: model.OutcomeUnchanged}
			if raw, err = json.Marshal(rec); err != nil {
				return err
			}
			outputs[s.ID] = raw
		}
	}
	if err := a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataPlan, plans); err != nil {
		return err
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataOutputs, outputs)
}

// isConfig reports whether err is an activity error no retry can fix.
func isConfig(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == contract.ConfigErrorType
}

// exprContext is the expression context of s without dependencies, with
// the execution's parameters.
func exprContext(a *Activities, s *planner.StoredStep, params model.ApplyParams) expr.Context {
	env, secret := a.lookups(params)
	return expr.Context{
		Env: env, Secret: secret, Verbatim: s.Verbatim, Vars: params.Vars,
		Node: map[string]any{"name": stepdata.NodeName(s.Node), "id": stepdata.NodeName(s.Node)},
	}
}

func (r *stepRun) redact(s string) string { return expr.Redact(s, r.secrets) }

// intentKey is the key of one step's change in one execution, the same on
// every attempt (providers.Env.Intent): a digest, so neither id is handed
// to the systems a provider talks to.
func intentKey(execID, stepID string) string {
	sum := sha256.Sum256([]byte("cairn intent\x00" + execID + "\x00" + stepID))
	return hex.EncodeToString(sum[:16])
}
