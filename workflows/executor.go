package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// Executor runs a plan's units as a DAG inside a workflow: each unit starts
// the moment its dependencies succeeded, at most Parallelism at once and at
// most Strategy copies of one task, on its node's task queue. On failure it
// follows OnFailure; a rollback compensates every done change in reverse
// dependency order on a disconnected context, so cancellation still rolls
// back. Apply, dry-run, destroy and graph executions all use it.
//
// The order is a dag.Scheduler's, which owns every unit's scheduling state
// (pending, ready, running, succeeded, skipped, failed, upstream-failed,
// held); the executor runs the activities, keeps what they returned and
// turns both into the report.
type Executor struct {
	opts  ExecOptions
	units []contract.Unit
	base  int // global index of units[0]
	sched *dag.Scheduler
	state []unitState

	done []completion // finished activities not yet taken in
	seq  int          // completion counter, for reverse-order compensation

	stopping  bool // no new units
	rollback  bool // compensate at the end
	aborted   bool
	cancelled bool
	cause     string
	decisions []*pendingDecision
	// stopped is set once the run loop is over: units never started were
	// skipped.
	stopped bool
	// undoing is set by CompensateAll: every unit counts as succeeded.
	undoing bool

	compFailures []model.StepError
	// recreated maps step ids to the new ids of objects compensations
	// created again.
	recreated  map[string]string
	rolledBack bool
	final      *Outcome
	// notifiedOutside are steps of earlier shards that changed and
	// refresh steps here (see refresh.go).
	notifiedOutside map[string]bool
	// awaiting shows a decision awaited in CairnAwaiting; parent, set in
	// a shard child, is told too (see awaiting.go).
	awaiting awaitingMark
	parent   *parentLink
}

// unitState is what the executor knows of a unit beyond its scheduling
// state: its runs and what they returned.
type unitState struct {
	runs     int
	attempts int
	seq      int // completion order; 0 = never completed
	// uncertain marks a unit interrupted or failed as a whole: which of its
	// steps changed is unknown, so compensation checks every step. A unit
	// whose failed step reported nothing to undo is not uncertain.
	uncertain bool
	// tolerated marks a failure within its group's fault tolerance.
	tolerated bool
	// cancelled marks a unit whose activity was cancelled.
	cancelled bool
	// rolledBack marks a succeeded unit a compensation undid; undone
	// holds the steps it undid.
	rolledBack bool
	undone     map[string]bool
	// skip lists the steps an operator chose to skip, for the unit's
	// next runs.
	skip      []string
	results   []contract.StepResult
	err       string
	startedAt *model.Time
	endedAt   *model.Time
}

// Names of the handlers executions register.
const (
	ProgressQuery  = "progress"
	DecisionUpdate = "decision"
)

// NewExecutor prepares a run over units, whose Index values are contiguous
// global indexes. failedOutside lists global indexes of units outside this
// range (earlier shards) that did not succeed; every other outside
// dependency is taken as satisfied.
func NewExecutor(ctx workflow.Context, opts ExecOptions, units []contract.Unit, failedOutside []int) *Executor {
	e := &Executor{
		opts:  opts.withDefaults(ctx),
		units: units,
		state: make([]unitState, len(units)),
	}
	if len(units) > 0 {
		e.base = units[0].Index
	}
	failed := map[int]bool{}
	for _, i := range failedOutside {
		failed[i] = true
	}
	outside := func(global int) dag.Outside {
		if failed[global] {
			return dag.OutsideFailed
		}
		return dag.OutsideSucceeded
	}
	b := dag.NewBuilder(len(units))
	for i := range units {
		u := &units[i]
		for _, d := range u.Deps {
			if l, ok := e.local(d); ok {
				b.DependsOn(i, l)
			} else {
				b.DependsOnOutside(i, outside(d))
			}
		}
		for _, group := range u.AnyOf {
			var inside []int
			var out []dag.Outside
			for _, d := range group {
				if l, ok := e.local(d); ok {
					inside = append(inside, l)
				} else {
					out = append(out, outside(d))
				}
			}
			b.DependsOnAny(i, inside, out...)
		}
		if u.Strategy > 0 {
			b.Cap(i, capKey(u), u.Strategy)
		}
		if limit, ok := e.opts.Tolerance[u.Group]; ok && u.Group != "" {
			b.Tolerate(i, u.Group, u.Node, limit)
		}
	}
	e.sched = b.Build(dag.Options{Parallelism: e.opts.Parallelism})
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
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func(offset, limit int) (*model.ProgressPage, error) {
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
//
// Each turn it starts what the scheduler hands out, waits for a unit to
// finish, a decision or cancellation, and takes them in, until nothing
// runs, waits or is left to start; then it compensates if it must.
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
			e.cancel()
			cancelActs()
		}
		e.launch(actCtx, loopCtx)
		if e.sched.Running() == 0 && e.sched.Count(dag.Held) == 0 && len(e.done) == 0 && len(e.decisions) == 0 {
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
		e.markAwaiting(loopCtx)
	}
	e.markAwaiting(loopCtx) // a cancellation ended the wait
	e.finishPending()
	if e.rollback {
		e.compensate(loopCtx)
	}
	e.final = e.outcome()
	e.updateDetails(loopCtx)
	return e.final, nil
}

// cancel stops the run on the workflow's cancellation: nothing new starts,
// units waiting for a decision fail, and an apply rolls back.
func (e *Executor) cancel() {
	e.cancelled = true
	e.stopping = true
	if e.cause == "" {
		e.cause = "execution cancelled"
	}
	if e.opts.RollbackOnCancel {
		e.rollback = true
	}
	for _, i := range e.sched.Held() {
		e.sched.Abandon(i)
	}
}

// finishPending marks what never started once the run stopped.
func (e *Executor) finishPending() {
	e.stopped = true
	for i := range e.units {
		if s := e.sched.State(i); s == dag.Pending || s == dag.Ready {
			e.state[i].err = "not started: the execution stopped"
		}
	}
}

// status is unit i's status in the report and the progress query.
func (e *Executor) status(i int) model.Status {
	st := &e.state[i]
	if e.undoing {
		if st.rolledBack {
			return model.StatusRolledBack
		}
		return model.StatusSucceeded
	}
	switch e.sched.State(i) {
	case dag.Running:
		return model.StatusRunning
	case dag.Held:
		return model.StatusWaiting
	case dag.Succeeded:
		if st.rolledBack {
			return model.StatusRolledBack
		}
		return model.StatusSucceeded
	case dag.Skipped:
		return model.StatusSkipped
	case dag.Failed:
		if st.cancelled {
			return model.StatusCanceled
		}
		return model.StatusFailed
	case dag.UpstreamFailed:
		return model.StatusDepFailed
	}
	if e.stopped {
		return model.StatusSkipped
	}
	return model.StatusPending
}

// unitError is the error shown for unit i: its own, or for a unit that
// never ran, which dependency kept it from running.
func (e *Executor) unitError(i int) string {
	dep, ok := e.sched.Cause(i)
	switch {
	case !ok:
		return e.state[i].err
	case dep < 0:
		return "a dependency in an earlier shard failed"
	case e.sched.State(dep) == dag.UpstreamFailed:
		return "dependency " + e.units[dep].Step + " did not run"
	case e.state[dep].cancelled:
		return "cancelled"
	}
	return "dependency " + e.units[dep].Step + " failed"
}

// capKey names the units that share a strategy cap: the copies of one task,
// or the members of one group that take the group's strategy.
func capKey(u *contract.Unit) string {
	if u.Scope != "" {
		return "group:" + u.Scope
	}
	return "task:" + u.Task
}
