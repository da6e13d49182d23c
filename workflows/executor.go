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

	// phase is where the run stands (see phase.go); halt why it stopped.
	phase phase
	halt  halt

	done      []completion // finished activities not yet taken in
	seq       int          // completion counter, for reverse-order compensation
	decisions []*pendingDecision

	// saga holds each unit's compensation, registered as the unit
	// completes (see compensation.go).
	saga         saga
	compFailures []model.StepError
	// recreated maps step ids to the new ids of objects compensations
	// created again.
	recreated map[string]string
	final     *Outcome
	// notifiedOutside are steps of earlier shards that changed and
	// refresh steps here (see refresh.go).
	notifiedOutside map[string]bool
	// awaiting shows a decision awaited in CairnAwaiting; parent, set in
	// a shard child, is told too (see awaiting.go).
	awaiting awaitingMark
	parent   *parentLink
	// version counts the changes of units' states (see changes.go).
	version int64
}

// unitState is what the executor knows of a unit beyond its scheduling
// state: its runs and what they returned.
type unitState struct {
	runs     int
	attempts int
	seq      int // completion order; 0 = never completed
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
	// version is the executor's change counter at the unit's last change.
	version int64
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
		saga:  newSaga(len(units)),
	}
	if len(units) > 0 {
		e.base = units[0].Index
	}
	for i := range units {
		e.touch(i) // versions 1..n: "since 0" lists every unit, in order
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
	e.sched = b.Build(dag.Options{Parallelism: e.opts.Parallelism, OnChange: e.scheduled})
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
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func(offset, limit int, since *ProgressSince) (*model.ProgressPage, error) {
		if since != nil {
			return e.Changes(since.Version, limit), nil
		}
		return e.Progress(offset, limit), nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, DecisionUpdate,
		func(ctx workflow.Context, req model.DecisionRequest) (model.DecisionResult, error) {
			res, _, err := e.Decide(ctx, req)
			return res, err
		},
		workflow.UpdateHandlerOptions{Validator: e.ValidateDecision},
	)
}

// capKey names the units that share a strategy cap: the copies of one task,
// or the members of one group that take the group's strategy.
func capKey(u *contract.Unit) string {
	if u.Scope != "" {
		return "group:" + u.Scope
	}
	return "task:" + u.Task
}
