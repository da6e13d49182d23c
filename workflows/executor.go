package workflows

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Executor runs a plan's units as a DAG inside a workflow: each unit starts
// the moment its dependencies succeeded, at most Parallelism at once and at
// most Strategy copies of one task, on its node's task queue. On failure it
// follows OnFailure; a rollback compensates every done change in reverse
// dependency order on a disconnected context, so cancellation still rolls
// back. Apply, dry-run, destroy and graph executions all use it.
type Executor struct {
	opts  ExecOptions
	units []contract.Unit
	base  int // global index of units[0]
	state []unitState
	// dependents[i] lists the local units that wait on unit i.
	dependents [][]int

	ready    []int // local indexes whose deps are satisfied, in order
	inflight int
	running  map[string]int // Task → running copies (strategy caps)
	done     []completion
	seq      int // completion counter, for reverse-order compensation

	stopping  bool // no new units
	rollback  bool // compensate at the end
	aborted   bool
	cancelled bool
	cause     string
	waiting   []int // paused units awaiting a decision
	decisions []*pendingDecision

	compFailures []model.StepError
	// groupFailed holds, per group with a tolerance, the nodes on which a
	// step of the group failed.
	groupFailed map[string]map[string]bool
	// recreated maps step ids to the new ids of objects compensations
	// created again.
	recreated  map[string]string
	rolledBack bool
	final      *Outcome
}

type unitState struct {
	status   model.Status
	runs     int
	attempts int
	seq      int // completion order; 0 = never completed
	// remaining counts unsatisfied deps plus unsatisfied AnyOf groups.
	remaining   int
	anyOfDone   []bool
	anyOfFailed []int
	// uncertain marks a unit interrupted or failed as a whole: which of its
	// steps changed is unknown, so compensation checks every step.
	uncertain bool
	// tolerated marks a failure within its group's fault tolerance.
	tolerated bool
	results   []contract.StepResult
	err       string
	startedAt *model.Time
	endedAt   *model.Time
}

type completion struct {
	unit int
	res  contract.UnitResult
	err  error
}

type pendingDecision struct {
	req     DecisionRequest
	target  int
	applied bool
}

// DecisionRequest is an operator's answer to a paused execution, sent as the
// "decision" Update. Step picks one of several waiting steps; empty means
// the first.
type DecisionRequest struct {
	Action model.Decision `json:"action"`
	Step   string         `json:"step,omitempty"`
}

// DecisionResult says which step the decision was applied to.
type DecisionResult struct {
	Step   string         `json:"step"`
	Action model.Decision `json:"action"`
}

// Names of the handlers executions register.
const (
	ProgressQuery  = "progress"
	DecisionUpdate = "decision"
)

// Outcome is what an executor run leaves: the report and how it ended.
type Outcome struct {
	Report         model.Report  `json:"report"`
	Plan           model.Summary `json:"plan"`
	Failed         bool          `json:"failed"`
	Cause          string        `json:"cause,omitempty"`
	RolledBack     bool          `json:"rolledBack,omitempty"`
	Cancelled      bool          `json:"cancelled,omitempty"`
	Aborted        bool          `json:"aborted,omitempty"`
	MissingEnv     []string      `json:"missingEnv,omitempty"`
	MissingSecrets []string      `json:"missingSecrets,omitempty"`
	// FailedUnits are the global indexes of units that did not succeed, so
	// later shards can fail their dependents.
	FailedUnits []int `json:"failedUnits,omitempty"`
	// Tolerated lists the failures (also in Report.Failures) that stayed
	// within their group's fault tolerance and so did not fail the run.
	Tolerated []model.StepError `json:"tolerated,omitempty"`
	// Recreated maps step ids to the new ids of objects a compensation
	// created again (an http object deleted by the run comes back under a
	// new id), which the stack record must name.
	Recreated map[string]string `json:"recreated,omitempty"`
}

// NewExecutor prepares a run over units, whose Index values are contiguous
// global indexes. failedOutside lists global indexes of units outside this
// range (earlier shards) that did not succeed; every other outside
// dependency is taken as satisfied.
func NewExecutor(ctx workflow.Context, opts ExecOptions, units []contract.Unit, failedOutside []int) *Executor {
	e := &Executor{
		opts:    opts.withDefaults(ctx),
		units:   units,
		state:   make([]unitState, len(units)),
		running: map[string]int{},
	}
	if len(units) > 0 {
		e.base = units[0].Index
	}
	outsideFailed := map[int]bool{}
	for _, i := range failedOutside {
		outsideFailed[i] = true
	}
	e.dependents = make([][]int, len(units))
	var depFailed []int
	for i := range units {
		u := &units[i]
		st := &e.state[i]
		st.status = model.StatusPending
		blocked := false
		for _, d := range u.Deps {
			if l, ok := e.local(d); ok {
				e.dependents[l] = append(e.dependents[l], i)
				st.remaining++
			} else if outsideFailed[d] {
				blocked = true
			}
		}
		st.anyOfDone = make([]bool, len(u.AnyOf))
		st.anyOfFailed = make([]int, len(u.AnyOf))
		for g, group := range u.AnyOf {
			inside, outsideOK := 0, false
			for _, d := range group {
				if l, ok := e.local(d); ok {
					if !slices.Contains(e.dependents[l], i) {
						e.dependents[l] = append(e.dependents[l], i)
					}
					inside++
				} else if !outsideFailed[d] {
					outsideOK = true
				} else {
					st.anyOfFailed[g]++
				}
			}
			switch {
			case outsideOK || len(group) == 0:
				st.anyOfDone[g] = true
			case inside == 0:
				blocked = true
			default:
				st.remaining++
			}
		}
		if blocked {
			depFailed = append(depFailed, i)
		} else if st.remaining == 0 {
			e.ready = append(e.ready, i)
		}
	}
	for _, i := range depFailed {
		e.markDepFailed(i, "a dependency in an earlier shard failed")
	}
	return e
}

func (e *Executor) local(global int) (int, bool) {
	l := global - e.base
	if l < 0 || l >= len(e.units) || e.units[l].Index != global {
		return 0, false
	}
	return l, true
}

// Register installs the progress query and the decision Update on the
// workflow; sharded parents install their own instead.
func (e *Executor) Register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func(offset, limit int) (*Progress, error) {
		return e.Progress(offset, limit), nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, DecisionUpdate,
		e.Decide,
		workflow.UpdateHandlerOptions{Validator: e.ValidateDecision},
	)
}

// Run executes the units and returns how it went. It returns an error only
// for a broken workflow, never for failed steps (see Outcome).
func (e *Executor) Run(ctx workflow.Context) (*Outcome, error) {
	// The loop and its activities run on a context that the workflow's
	// cancellation does not reach, so in-flight results are still collected
	// and changes can be compensated; a watcher turns cancellation into a
	// flag and cancels the step activities explicitly.
	loopCtx, _ := workflow.NewDisconnectedContext(ctx)
	actCtx, cancelActs := workflow.WithCancel(loopCtx)
	cancelRequested := false
	workflow.Go(ctx, func(c workflow.Context) {
		c.Done().Receive(c, nil)
		cancelRequested = true
	})

	e.updateDetails(loopCtx)
	for {
		if cancelRequested && !e.cancelled {
			e.cancelled = true
			e.stopping = true
			if e.cause == "" {
				e.cause = "execution cancelled"
			}
			if e.opts.RollbackOnCancel {
				e.rollback = true
			}
			for _, i := range e.waiting {
				e.state[i].status = model.StatusFailed
			}
			e.waiting = nil
			cancelActs()
		}
		e.launch(actCtx, loopCtx)
		if e.inflight == 0 && len(e.waiting) == 0 && len(e.done) == 0 && len(e.decisions) == 0 {
			break
		}
		if err := workflow.Await(loopCtx, func() bool {
			return len(e.done) > 0 || e.hasDecision() || (cancelRequested && !e.cancelled)
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
	}
	e.finishPending()
	if e.rollback {
		e.compensate(loopCtx)
	}
	e.final = e.outcome()
	e.updateDetails(loopCtx)
	return e.final, nil
}

// launch starts ready units while the caps allow.
func (e *Executor) launch(actCtx, loopCtx workflow.Context) {
	if e.stopping || len(e.waiting) > 0 {
		return
	}
	kept := e.ready[:0]
	for _, i := range e.ready {
		u := &e.units[i]
		switch {
		case e.state[i].status != model.StatusPending:
			continue // dropped while queued (dep failed)
		case e.inflight >= e.opts.Parallelism,
			u.Strategy > 0 && e.running[u.Task] >= u.Strategy:
			kept = append(kept, i)
			continue
		}
		e.start(actCtx, loopCtx, i)
	}
	e.ready = kept
}

func (e *Executor) start(actCtx, loopCtx workflow.Context, i int) {
	u := &e.units[i]
	st := &e.state[i]
	now := workflow.Now(loopCtx)
	st.status = model.StatusRunning
	st.runs++
	st.startedAt, st.endedAt = &now, nil
	e.inflight++
	if u.Strategy > 0 {
		e.running[u.Task]++
	}
	name := contract.ApplyStepName
	if u.Batch {
		name = contract.ApplyBatchName
	}
	in := contract.UnitInput{
		ExecutionID: e.opts.ExecutionID,
		Unit:        *u,
		Noop:        e.opts.Mode == contract.ModeDryRun || u.Meta.Noop,
		Rerun:       st.runs > 1,
	}
	fut := workflow.ExecuteActivity(workflow.WithActivityOptions(actCtx, e.opts.stepActivityOptions(u)), name, in)
	workflow.Go(loopCtx, func(c workflow.Context) {
		var res contract.UnitResult
		err := fut.Get(c, &res)
		res.Expand()
		e.done = append(e.done, completion{unit: i, res: res, err: err})
	})
}

// complete takes in one finished unit.
func (e *Executor) complete(ctx workflow.Context, c completion) {
	i := c.unit
	u := &e.units[i]
	st := &e.state[i]
	now := workflow.Now(ctx)
	st.endedAt = &now
	e.inflight--
	if u.Strategy > 0 {
		e.running[u.Task]--
	}
	e.seq++
	st.seq = e.seq
	if c.err != nil {
		st.attempts += failedAttempts(c.err)
		msg := e.describe(u, c.err)
		st.err = msg
		st.uncertain = true
		st.results = nil
		if isCancellation(c.err) {
			st.status = model.StatusCanceled
			e.blockDependents(i, "cancelled")
			return
		}
		e.fail(i, msg)
		return
	}
	st.attempts += max(c.res.Attempt, 1)
	st.results = c.res.Steps
	st.err = ""
	for _, r := range c.res.Steps {
		if r.Outcome == model.OutcomeFailed {
			st.err = r.StepID + ": " + r.Error
			break
		}
	}
	if st.err != "" {
		e.fail(i, st.err)
		return
	}
	st.status = model.StatusSucceeded
	if allSkipped(c.res.Steps) {
		// Condition false, task not selected: nothing ran.
		st.status = model.StatusSkipped
	}
	e.satisfy(i)
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

// fail handles a unit that failed after its retries.
func (e *Executor) fail(i int, msg string) {
	u := &e.units[i]
	st := &e.state[i]
	if u.ContinueOnError {
		st.status = model.StatusSkipped
		e.satisfy(i)
		return
	}
	if e.tolerate(i) {
		st.status = model.StatusFailed
		st.tolerated = true
		e.blockDependents(i, "dependency "+u.Step+" failed")
		return
	}
	if e.opts.OnFailure == model.OnFailurePause && !e.stopping {
		st.status = model.StatusWaiting
		e.waiting = append(e.waiting, i)
		return
	}
	e.failed(i, msg)
}

// tolerate counts a failure of unit i against its group's tolerance and
// reports whether the group still tolerates it: distinct nodes count, so
// a second failure on a node already counted costs nothing.
func (e *Executor) tolerate(i int) bool {
	u := &e.units[i]
	limit, ok := e.opts.Tolerance[u.Group]
	if u.Group == "" || !ok {
		return false
	}
	if e.groupFailed == nil {
		e.groupFailed = map[string]map[string]bool{}
	}
	if e.groupFailed[u.Group] == nil {
		e.groupFailed[u.Group] = map[string]bool{}
	}
	e.groupFailed[u.Group][u.Node] = true
	return len(e.groupFailed[u.Group]) <= limit
}

// failed records a definitive failure and applies OnFailure.
func (e *Executor) failed(i int, msg string) {
	st := &e.state[i]
	st.status = model.StatusFailed
	if e.cause == "" {
		e.cause = e.units[i].Summary + ": " + msg
		if g := e.units[i].Group; len(e.groupFailed[g]) > 0 {
			e.cause = fmt.Sprintf("group %s: %d nodes failed, fault_tolerance allows %d (first failure: %s)",
				g, len(e.groupFailed[g]), e.opts.Tolerance[g], e.cause)
		}
	}
	e.blockDependents(i, "dependency "+e.units[i].Step+" failed")
	switch e.opts.OnFailure {
	case model.OnFailureRollback:
		e.stopping = true
		e.rollback = true
	case model.OnFailureStop, model.OnFailurePause:
		e.stopping = true
	}
}

// satisfy releases the dependents of a unit that succeeded (or was skipped).
func (e *Executor) satisfy(i int) {
	global := e.units[i].Index
	for _, d := range e.dependents[i] {
		st := &e.state[d]
		if st.status != model.StatusPending {
			continue
		}
		du := &e.units[d]
		for _, dep := range du.Deps {
			if dep == global {
				st.remaining--
			}
		}
		for g, group := range du.AnyOf {
			if !st.anyOfDone[g] && slices.Contains(group, global) {
				st.anyOfDone[g] = true
				st.remaining--
			}
		}
		if st.remaining == 0 {
			e.ready = append(e.ready, d)
		}
	}
}

// blockDependents marks what can no longer run because unit i did not
// succeed; an AnyOf group fails only when all its members did.
func (e *Executor) blockDependents(i int, why string) {
	global := e.units[i].Index
	for _, d := range e.dependents[i] {
		st := &e.state[d]
		if st.status != model.StatusPending {
			continue
		}
		du := &e.units[d]
		if slices.Contains(du.Deps, global) {
			e.markDepFailed(d, why)
			continue
		}
		for g, group := range du.AnyOf {
			if st.anyOfDone[g] || !slices.Contains(group, global) {
				continue
			}
			st.anyOfFailed[g]++
			if st.anyOfFailed[g] >= len(group) {
				e.markDepFailed(d, why)
				break
			}
		}
	}
}

func (e *Executor) markDepFailed(i int, why string) {
	st := &e.state[i]
	if st.status != model.StatusPending {
		return
	}
	st.status = model.StatusDepFailed
	st.err = why
	e.blockDependents(i, "dependency "+e.units[i].Step+" did not run")
}

// finishPending marks what never started once the run stopped.
func (e *Executor) finishPending() {
	for i := range e.state {
		if e.state[i].status == model.StatusPending {
			e.state[i].status = model.StatusSkipped
			e.state[i].err = "not started: the execution stopped"
		}
	}
}

func (e *Executor) hasDecision() bool {
	for _, d := range e.decisions {
		if !d.applied {
			return true
		}
	}
	return false
}

// ValidateDecision accepts a decision only while a step waits for one.
func (e *Executor) ValidateDecision(req DecisionRequest) error {
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
	for _, i := range e.waiting {
		if taken[i] {
			continue
		}
		if step == "" || e.unitHasStep(i, step) {
			return i, nil
		}
		names = append(names, e.units[i].Step)
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

// Decide is the decision Update handler: it queues the decision for the run
// loop and returns once the loop applied it.
func (e *Executor) Decide(ctx workflow.Context, req DecisionRequest) (DecisionResult, error) {
	target, err := e.decisionTarget(req.Step)
	if err != nil {
		return DecisionResult{}, err
	}
	d := &pendingDecision{req: req, target: target}
	e.decisions = append(e.decisions, d)
	if err := workflow.Await(ctx, func() bool { return d.applied }); err != nil {
		return DecisionResult{}, err
	}
	return DecisionResult{Step: e.units[target].Step, Action: req.Action}, nil
}

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
	if !slices.Contains(e.waiting, i) {
		return // the unit stopped waiting meanwhile (cancellation)
	}
	e.waiting = slices.DeleteFunc(e.waiting, func(w int) bool { return w == i })
	st := &e.state[i]
	msg := st.err
	switch d.req.Action {
	case model.DecisionRetry:
		st.status = model.StatusPending
		e.ready = append([]int{i}, e.ready...)
	case model.DecisionSkip:
		st.status = model.StatusSkipped
		e.satisfy(i)
	case model.DecisionRollback:
		e.failed(i, msg)
		e.stopping, e.rollback = true, true
		e.failWaiting()
	case model.DecisionAbort:
		e.failed(i, msg)
		e.stopping, e.aborted = true, true
		e.failWaiting()
	}
}

// failWaiting ends the other waiting units once the run stops.
func (e *Executor) failWaiting() {
	for _, w := range e.waiting {
		e.failed(w, e.state[w].err)
	}
	e.waiting = nil
}

// compensate undoes every done change, a unit only after every unit that
// depended on it, most recently completed first, Parallelism at once.
func (e *Executor) compensate(ctx workflow.Context) {
	type job struct {
		unit    int
		stepIDs []string
	}
	jobs := map[int]*job{}
	for i := range e.units {
		st := &e.state[i]
		if st.runs == 0 {
			continue
		}
		if st.uncertain {
			jobs[i] = &job{unit: i}
			continue
		}
		var ids []string
		for _, r := range st.results {
			if r.Changed() {
				ids = append(ids, r.StepID)
			}
		}
		if len(ids) > 0 {
			jobs[i] = &job{unit: i, stepIDs: ids}
		}
	}
	if len(jobs) == 0 {
		return
	}
	e.rolledBack = true
	blockers := map[int]int{}
	for i := range jobs {
		for _, d := range e.dependents[i] {
			if jobs[d] != nil {
				blockers[i]++
			}
		}
	}
	var ready []int
	for i := range jobs {
		if blockers[i] == 0 {
			ready = append(ready, i)
		}
	}
	byRecency := func() {
		sort.Slice(ready, func(a, b int) bool { return e.state[ready[a]].seq > e.state[ready[b]].seq })
	}
	byRecency()
	type compDone struct {
		unit int
		res  contract.CompensateOutput
		err  error
	}
	var finished []compDone
	inflight := 0
	for len(ready) > 0 || inflight > 0 {
		for len(ready) > 0 && inflight < e.opts.Parallelism {
			i := ready[0]
			ready = ready[1:]
			u := &e.units[i]
			in := contract.CompensateInput{ExecutionID: e.opts.ExecutionID, Unit: *u, StepIDs: jobs[i].stepIDs}
			fut := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, e.opts.compensationOptions(u)), contract.CompensateName, in)
			inflight++
			workflow.Go(ctx, func(c workflow.Context) {
				var res contract.CompensateOutput
				err := fut.Get(c, &res)
				finished = append(finished, compDone{unit: i, res: res, err: err})
			})
		}
		_ = workflow.Await(ctx, func() bool { return len(finished) > 0 })
		for _, f := range finished {
			inflight--
			e.takeCompensation(f.unit, f.res, f.err)
			for _, d := range e.units[f.unit].Deps {
				if l, ok := e.local(d); ok && jobs[l] != nil {
					if blockers[l]--; blockers[l] == 0 {
						ready = append(ready, l)
					}
				}
			}
			for _, group := range e.units[f.unit].AnyOf {
				for _, d := range group {
					if l, ok := e.local(d); ok && jobs[l] != nil {
						if blockers[l]--; blockers[l] == 0 {
							ready = append(ready, l)
						}
					}
				}
			}
		}
		finished = finished[:0]
		byRecency()
	}
}

func (e *Executor) takeCompensation(i int, res contract.CompensateOutput, err error) {
	u := &e.units[i]
	st := &e.state[i]
	if err != nil {
		e.compFailures = append(e.compFailures, model.StepError{Step: u.Step, Error: "compensation: " + errMessage(err)})
		return
	}
	for step, id := range res.Recreated {
		if e.recreated == nil {
			e.recreated = map[string]string{}
		}
		e.recreated[step] = id
	}
	undone := map[string]bool{}
	for _, r := range res.Steps {
		switch {
		case r.Error != "":
			e.compFailures = append(e.compFailures, model.StepError{Step: r.StepID, Error: r.Error})
		case r.Irreversible:
			e.compFailures = append(e.compFailures, model.StepError{Step: r.StepID, Error: "irreversible: nothing undoes it"})
		case r.Undone:
			undone[r.StepID] = true
		}
	}
	if len(undone) > 0 && st.status == model.StatusSucceeded {
		st.status = model.StatusRolledBack
	}
}

// outcome builds the report once the run is over.
func (e *Executor) outcome() *Outcome {
	o := &Outcome{Cause: e.cause, Cancelled: e.cancelled, Aborted: e.aborted, RolledBack: e.rolledBack, Recreated: e.recreated}
	env, secrets := map[string]bool{}, map[string]bool{}
	tolerated := 0 // failed steps within their group's tolerance
	for i := range e.units {
		u := &e.units[i]
		st := &e.state[i]
		switch st.status {
		case model.StatusSucceeded, model.StatusRolledBack:
		case model.StatusSkipped:
		default:
			o.FailedUnits = append(o.FailedUnits, u.Index)
		}
		if len(st.results) > 0 {
			for _, r := range st.results {
				outcome := r.Outcome
				if st.status == model.StatusSkipped && outcome == model.OutcomeFailed {
					outcome = model.OutcomeSkipped // fail_on_error: false
				}
				o.Report.Count(outcome)
				if outcome == model.OutcomeFailed {
					f := model.StepError{Step: r.StepID, Error: r.Error}
					o.Report.Failures = append(o.Report.Failures, f)
					if st.tolerated {
						o.Tolerated = append(o.Tolerated, f)
						tolerated++
					}
				}
				if r.Action != "" && outcome != model.OutcomeFailed {
					o.Plan.Add(r.Action)
				}
				for _, k := range r.MissingEnv {
					env[k] = true
				}
				for _, k := range r.MissingSecrets {
					secrets[k] = true
				}
			}
			// Steps of a batch that returned fewer results than it holds
			// never ran.
			for range max(u.Count-len(st.results), 0) {
				o.Report.Count(model.OutcomeSkipped)
			}
			continue
		}
		n := max(u.Count, 1)
		switch st.status {
		case model.StatusFailed, model.StatusCanceled:
			for range n {
				o.Report.Count(model.OutcomeFailed)
			}
			f := model.StepError{Step: u.Step, Error: st.err}
			o.Report.Failures = append(o.Report.Failures, f)
			if st.tolerated {
				o.Tolerated = append(o.Tolerated, f)
				tolerated += n
			}
		default:
			for range n {
				o.Report.Count(model.OutcomeSkipped)
			}
		}
	}
	o.Report.CompensationFailures = e.compFailures
	o.Report.RolledBack = e.rolledBack
	o.Failed = o.Report.Failed > tolerated || e.cancelled || e.aborted
	o.MissingEnv = sortedKeys(env)
	o.MissingSecrets = sortedKeys(secrets)
	return o
}

// Err is the error a workflow fails with after this outcome, or nil. It
// names the cause and each compensation that itself failed, and carries
// the report as details.
func (o *Outcome) Err() error {
	if !o.Failed {
		return nil
	}
	var b strings.Builder
	b.WriteString(o.Cause)
	if o.Cause == "" {
		b.WriteString("execution failed")
	}
	if n := len(o.Report.Failures); n > 1 {
		fmt.Fprintf(&b, " (%d steps failed)", n)
	}
	errType := ErrFailed
	switch {
	case o.RolledBack:
		errType = ErrRolledBack
		b.WriteString("; rolled back")
	case o.Aborted:
		b.WriteString("; aborted")
	}
	if n := len(o.Report.CompensationFailures); n > 0 {
		fmt.Fprintf(&b, "; %d compensations failed:", n)
		for _, f := range o.Report.CompensationFailures {
			fmt.Fprintf(&b, " %s: %s;", f.Step, f.Error)
		}
	}
	msg := strings.TrimSuffix(b.String(), ";")
	if o.Cancelled {
		return temporal.NewCanceledError(o.Report)
	}
	return temporal.NewNonRetryableApplicationError(msg, errType, nil, o.Report)
}

// Status is the execution status this outcome ends in.
func (o *Outcome) Status() model.ExecutionStatus {
	switch {
	case o.Cancelled:
		return model.ExecCanceled
	case o.Failed && o.RolledBack:
		return model.ExecRolledBack
	case o.Failed:
		return model.ExecFailed
	}
	return model.ExecCompleted
}

// Error types of failed executions; the report rides as details.
const (
	ErrFailed     = "ExecutionFailed"
	ErrRolledBack = "RolledBack"
)

func (e *Executor) describe(u *contract.Unit, err error) string {
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		switch timeout.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			return fmt.Sprintf("node %s has no agent polling (task queue %s, waited %s)",
				u.Node, e.opts.queueFor(u.Node), e.opts.NodeWait)
		case enumspb.TIMEOUT_TYPE_HEARTBEAT:
			return "worker stopped responding (heartbeat timeout)"
		default:
			return "timed out"
		}
	}
	return errMessage(err)
}

// errMessage is the innermost meaningful message of an activity error.
func errMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return "cancelled"
	}
	return err.Error()
}

func failedAttempts(err error) int {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		var d contract.FailureDetails
		if app.Details(&d) == nil && d.Attempt > 0 {
			return d.Attempt
		}
	}
	return 1
}

func isCancellation(err error) bool {
	var canceled *temporal.CanceledError
	return errors.As(err, &canceled)
}

// Progress is the answer of the progress query.
type Progress struct {
	ExecutionID string                `json:"executionId"`
	Status      model.ExecutionStatus `json:"status"`
	Total       int                   `json:"total"`   // steps
	Done        int                   `json:"done"`    // steps finished
	Running     int                   `json:"running"` // units in flight
	Waiting     []string              `json:"waiting,omitempty"`
	Offset      int                   `json:"offset"`
	Entries     int                   `json:"entries"` // step entries in all
	Steps       []model.StepProgress  `json:"steps"`
	Report      *model.Report         `json:"report,omitempty"`
	// Shard is set on a sharded execution: the running shard's workflow
	// answers for its steps and takes decisions.
	Shard *ShardProgress `json:"shard,omitempty"`
}

// A query answer stays far below Temporal's payload limit: at most
// maxProgressSteps entries and about maxProgressBytes; the caller pages on
// with offset.
const (
	maxProgressSteps = 5000
	maxProgressBytes = 1 << 20
)

// approxSize estimates the JSON size of a progress entry.
func approxSize(sp *model.StepProgress) int {
	n := 200 + len(sp.ID) + len(sp.Error)
	for _, c := range sp.Changes {
		n += 40 + len(c.Path) + len(fmt.Sprint(c.Old)) + len(fmt.Sprint(c.New))
	}
	return n
}

// Progress lists every step's status from offset, at most limit entries
// (0 = as many as fit). A batch that has not reported yet is one entry.
func (e *Executor) Progress(offset, limit int) *Progress {
	if limit <= 0 || limit > maxProgressSteps {
		limit = maxProgressSteps
	}
	p := &Progress{ExecutionID: e.opts.ExecutionID, Offset: offset, Status: model.ExecRunning, Steps: []model.StepProgress{}}
	if len(e.waiting) > 0 {
		p.Status = model.ExecWaiting
	}
	if e.final != nil {
		p.Status = e.final.Status()
		p.Report = &e.final.Report
	}
	p.Running = e.inflight
	for _, i := range e.waiting {
		p.Waiting = append(p.Waiting, e.units[i].Step)
	}
	entry, size := 0, 0
	add := func(sp model.StepProgress) {
		if entry >= offset && len(p.Steps) < limit && size < maxProgressBytes {
			p.Steps = append(p.Steps, sp)
			size += approxSize(&sp)
		}
		entry++
	}
	for i := range e.units {
		u := &e.units[i]
		st := &e.state[i]
		p.Total += max(u.Count, 1)
		if finished(st.status) {
			p.Done += max(u.Count, 1)
		}
		base := model.StepProgress{
			Kind: u.Kind, Node: u.Node, Status: st.status, Attempts: st.attempts,
			Error: st.err, StartedAt: st.startedAt, EndedAt: st.endedAt,
		}
		if len(st.results) > 0 {
			for _, r := range st.results {
				sp := base
				sp.ID, sp.Name = r.StepID, stepName(r.StepID)
				sp.Action, sp.Changes, sp.Error = r.Action, r.Changes, r.Error
				switch {
				case st.status != model.StatusSucceeded:
				case r.Outcome == model.OutcomeFailed:
					sp.Status = model.StatusFailed
				case r.Outcome == model.OutcomeSkipped:
					sp.Status = model.StatusSkipped
				}
				add(sp)
			}
			continue
		}
		sp := base
		sp.ID, sp.Name = u.Step, stepName(u.Step)
		if u.Count > 1 {
			sp.ID = fmt.Sprintf("%s (+%d more)", u.Step, u.Count-1)
		}
		add(sp)
	}
	p.Entries = entry
	return p
}

func finished(s model.Status) bool {
	switch s {
	case model.StatusPending, model.StatusRunning, model.StatusWaiting:
		return false
	}
	return true
}

// stepName is the name part of "kind/name@node" or "task@node".
func stepName(id string) string {
	if _, after, ok := strings.Cut(id, "/"); ok {
		id = after
	}
	name, _, _ := strings.Cut(id, "@")
	return name
}

// updateDetails keeps the UI's current details line up to date.
func (e *Executor) updateDetails(ctx workflow.Context) {
	total, done := 0, 0
	for i := range e.units {
		n := max(e.units[i].Count, 1)
		total += n
		if finished(e.state[i].status) {
			done += n
		}
	}
	line := fmt.Sprintf("%d/%d steps done", done, total)
	if e.inflight > 0 {
		line += fmt.Sprintf(", %d running", e.inflight)
	}
	if len(e.waiting) > 0 {
		var names []string
		for _, i := range e.waiting {
			names = append(names, e.units[i].Step)
		}
		line += "; waiting for decision on " + strings.Join(names, ", ")
	}
	if e.cause != "" {
		line += "; failed: " + e.cause
	}
	if e.rolledBack {
		line += "; rolled back"
	}
	workflow.SetCurrentDetails(ctx, line)
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
