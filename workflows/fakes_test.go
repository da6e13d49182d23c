package workflows

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// fakeActivities stands in for the real activities: it records what ran,
// when, where and how many at once, and fails the steps it is told to.
type fakeActivities struct {
	mu     sync.Mutex
	plan   contract.PreparedPlan
	shards map[int][]contract.Unit
	// batches names the steps of each batch unit by unit index, in an
	// order where each step comes after its dependencies in the unit;
	// unitDeps gives those dependencies by step id.
	batches  map[int][]string
	unitDeps map[string][]string
	// failures: step id → how many runs fail (-1: always).
	failures map[string]int
	// hold: step id → real time the step takes.
	hold       map[string]time.Duration
	configErrs map[string]bool
	// untouched: failing steps that report they left nothing to undo.
	untouched map[string]bool

	runs        map[string]int
	order       []string // step ids as they finished, in order
	startedAt   map[string]int
	finishedAt  map[string]int
	clock       int
	inflight    int
	maxInflight int
	perTask     map[string]int
	maxPerTask  map[string]int
	queues      map[string]string
	compensated []string
	// applied marks steps that changed something, which a rerun recalls
	// instead of running again; batchInputs are the batch units' inputs.
	applied     map[string]bool
	batchInputs []contract.UnitInput
	records     []contract.WriteStackRecordInput
	plans       []contract.StorePlanInput
	hookEvents  []model.HookEvent
	// noHooks: no stack has a hook (WantsHooks answers false).
	noHooks bool
	noop    bool
	// unchanged: steps that find nothing to change; refreshIn: each
	// single-step unit's UnitInput.Refresh as the executor sent it.
	unchanged map[string]bool
	refreshIn map[string][]string
	// unknown: step id → how many runs end with the step's outcome
	// unknown (its command may have run), as the real activity reports
	// it to an executor that holds such steps; takenAsDone: steps a
	// skip decision took as done.
	unknown     map[string]int
	takenAsDone []string
}

func newFake(units ...contract.Unit) *fakeActivities {
	return &fakeActivities{
		plan:       contract.PreparedPlan{Units: units, Steps: countSteps(units)},
		batches:    map[int][]string{},
		unitDeps:   map[string][]string{},
		applied:    map[string]bool{},
		failures:   map[string]int{},
		hold:       map[string]time.Duration{},
		configErrs: map[string]bool{},
		runs:       map[string]int{},
		startedAt:  map[string]int{},
		finishedAt: map[string]int{},
		perTask:    map[string]int{},
		maxPerTask: map[string]int{},
		queues:     map[string]string{},
		unchanged:  map[string]bool{},
		refreshIn:  map[string][]string{},
		unknown:    map[string]int{},
	}
}

func countSteps(units []contract.Unit) int {
	n := 0
	for _, u := range units {
		n += max(u.Count, 1)
	}
	return n
}

func (f *fakeActivities) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(f.Prepare, activity.RegisterOptions{Name: contract.PrepareName})
	env.RegisterActivityWithOptions(f.LoadUnits, activity.RegisterOptions{Name: contract.LoadUnitsName})
	env.RegisterActivityWithOptions(f.ApplyStep, activity.RegisterOptions{Name: contract.ApplyStepName})
	env.RegisterActivityWithOptions(f.ApplyBatch, activity.RegisterOptions{Name: contract.ApplyBatchName})
	env.RegisterActivityWithOptions(f.Compensate, activity.RegisterOptions{Name: contract.CompensateName})
	env.RegisterActivityWithOptions(f.WriteStackRecord, activity.RegisterOptions{Name: contract.WriteStackRecordName})
	env.RegisterActivityWithOptions(f.StorePlan, activity.RegisterOptions{Name: contract.StorePlanName})
	env.RegisterWorkflow(ShardWorkflow)
	env.RegisterWorkflow(HookDeliveryWorkflow)
	env.RegisterActivityWithOptions(f.DeliverHooks, activity.RegisterOptions{Name: contract.DeliverHooksName})
	env.RegisterActivityWithOptions(f.WantsHooks, activity.RegisterOptions{Name: contract.WantsHooksName})
	registerAcceptStart(env)
	registerVouchActs(env)
}

// registerAcceptStart registers a ConsumeStart that accepts every start:
// these tests start workflows without the starter (the store's check of
// the nonce is tested end to end).
func registerAcceptStart(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(context.Context, contract.ConsumeStartInput) error { return nil },
		activity.RegisterOptions{Name: contract.ConsumeStartName})
}

// registerVouchActs registers a ConsumeAct that vouches for the principal
// a test names in the nonce ("by:<principal>"), and for no one ("") when
// a decision carries none; it refuses any other nonce, an approval
// without one, and one not bound to the Update carrying it. These tests
// send Updates without the starter (the store's check is tested end to
// end).
func registerVouchActs(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.ConsumeActInput) (contract.ConsumeActResult, error) {
		by, ok := strings.CutPrefix(in.Nonce, "by:")
		if in.Nonce == "" && in.Act == contract.ActDecide {
			ok = true
		}
		if !ok || in.Update == "" {
			return contract.ConsumeActResult{}, temporal.NewNonRetryableApplicationError(in.Act+" not issued", contract.ActNotIssuedType, nil)
		}
		return contract.ConsumeActResult{By: by}, nil
	}, activity.RegisterOptions{Name: contract.ConsumeActName})
}

func (f *fakeActivities) Prepare(ctx context.Context, in contract.PrepareInput) (*contract.PreparedPlan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noop = in.Mode == contract.ModeDryRun
	return &f.plan, nil
}

func (f *fakeActivities) LoadUnits(ctx context.Context, in contract.LoadUnitsInput) ([]contract.Unit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !in.Paged {
		return f.shards[in.Shard], nil
	}
	// A paged shard's units come two to a page.
	units := f.shards[in.Shard]
	return units[min(2*in.Page, len(units)):min(2*in.Page+2, len(units))], nil
}

func (f *fakeActivities) begin(ctx context.Context, u contract.Unit) {
	f.mu.Lock()
	f.clock++
	f.startedAt[u.Step] = f.clock
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	if u.Task != "" {
		f.perTask[u.Task]++
		f.maxPerTask[u.Task] = max(f.maxPerTask[u.Task], f.perTask[u.Task])
	}
	f.queues[u.Step] = activity.GetInfo(ctx).TaskQueue
	hold := f.hold[u.Step]
	f.mu.Unlock()
	if hold == 0 {
		hold = 2 * time.Millisecond
	}
	select {
	case <-time.After(hold):
	case <-ctx.Done():
	}
}

func (f *fakeActivities) end(u contract.Unit, ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock++
	f.finishedAt[u.Step] = f.clock
	f.inflight--
	if u.Task != "" {
		f.perTask[u.Task]--
	}
	f.order = append(f.order, ids...)
}

// failing counts a run of step id and says whether it fails.
func (f *fakeActivities) failing(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[id]++
	n := f.failures[id]
	return n < 0 || f.runs[id] <= n
}

func (f *fakeActivities) ApplyStep(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	f.begin(ctx, in.Unit)
	defer f.end(in.Unit, in.Unit.Step)
	if ctx.Err() != nil {
		return nil, temporal.NewCanceledError()
	}
	if f.configErrs[in.Unit.Step] {
		return nil, temporal.NewNonRetryableApplicationError("spec.mode: invalid", contract.ConfigErrorType, nil)
	}
	if slices.Contains(in.Skip, in.Unit.Step) {
		// Skipped by a decision on its unknown outcome: taken as done.
		f.mu.Lock()
		f.takenAsDone = append(f.takenAsDone, in.Unit.Step)
		f.mu.Unlock()
		return &contract.UnitResult{Attempt: 1, Steps: []contract.StepResult{{
			StepID: in.Unit.Step, Action: model.ActionRun, Outcome: model.OutcomeUpdated,
		}}}, nil
	}
	if f.failing(in.Unit.Step) {
		return nil, temporal.NewNonRetryableApplicationError("boom in "+in.Unit.Step, contract.StepFailedType, nil,
			contract.FailureDetails{StepID: in.Unit.Step, Attempt: 1, NothingToUndo: f.untouched[in.Unit.Step]})
	}
	f.mu.Lock()
	unknown := in.HoldsUnknown && f.runs[in.Unit.Step] <= f.unknown[in.Unit.Step]
	f.mu.Unlock()
	if unknown {
		return &contract.UnitResult{Attempt: 2, Steps: []contract.StepResult{{
			StepID: in.Unit.Step, Action: model.ActionRun, Outcome: model.OutcomeUnknown, Error: model.UnknownMessage,
		}}}, nil
	}
	action, outcome := model.ActionCreate, model.OutcomeCreated
	f.mu.Lock()
	if f.unchanged[in.Unit.Step] {
		action, outcome = model.ActionNoop, model.OutcomeUnchanged
	}
	f.refreshIn[in.Unit.Step] = in.Refresh
	f.mu.Unlock()
	refreshed := slices.Contains(in.Refresh, in.Unit.Step)
	if refreshed {
		action, outcome = model.ActionRun, model.OutcomeUpdated
	}
	if in.Noop {
		outcome = model.OutcomeUnchanged
	}
	return &contract.UnitResult{Attempt: 1, Steps: []contract.StepResult{{
		StepID: in.Unit.Step, Action: action, Outcome: outcome, ObjectID: "id-" + in.Unit.Step, Refreshed: refreshed,
	}}}, nil
}

// ApplyBatch runs a unit of several steps as the real activity does: in
// order, a step the operator skipped reported skipped, a step whose
// dependency in the unit failed reported blocked, and on a rerun a step
// that already changed something recalled rather than run again.
func (f *fakeActivities) ApplyBatch(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	f.mu.Lock()
	ids := f.batches[in.Unit.Index]
	f.batchInputs = append(f.batchInputs, in)
	f.mu.Unlock()
	f.begin(ctx, in.Unit)
	defer f.end(in.Unit, ids...)
	res := &contract.UnitResult{Attempt: 1}
	notOK := map[string]bool{}
	for _, id := range ids {
		r := contract.StepResult{StepID: id, Action: model.ActionCreate, Outcome: model.OutcomeCreated}
		f.mu.Lock()
		deps, recalled := f.unitDeps[id], in.Rerun && f.applied[id]
		f.mu.Unlock()
		for _, d := range deps {
			if notOK[d] {
				r.Outcome, r.Blocked = model.OutcomeSkipped, d
			}
		}
		switch {
		case slices.Contains(in.Skip, id):
			r.Action, r.Outcome = model.ActionNoop, model.OutcomeSkipped
		case r.Blocked != "":
			notOK[id] = true
		case recalled:
		case f.failing(id):
			r.Outcome, r.Error = model.OutcomeFailed, "boom in "+id
			notOK[id] = true
		default:
			f.mu.Lock()
			f.applied[id] = true
			f.mu.Unlock()
		}
		res.Steps = append(res.Steps, r)
	}
	res.Compact() // as the real batch does: plain results travel grouped
	return res, nil
}

func (f *fakeActivities) Compensate(ctx context.Context, in contract.CompensateInput) (*contract.CompensateResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := in.StepIDs
	if ids == nil {
		ids = []string{in.Unit.Step}
		if b := f.batches[in.Unit.Index]; b != nil {
			ids = b
		}
	}
	res := &contract.CompensateResult{}
	// As the real activity does, the steps of a unit are undone in
	// reverse order.
	for _, id := range slices.Backward(ids) {
		f.compensated = append(f.compensated, id)
		r := contract.CompensationResult{StepID: id, Undone: true}
		if strings.HasPrefix(id, "irreversible") {
			r = contract.CompensationResult{StepID: id, Irreversible: true}
		}
		if strings.HasPrefix(id, "stuck") {
			r = contract.CompensationResult{StepID: id, Error: "cannot restore " + id}
		}
		res.Steps = append(res.Steps, r)
	}
	return res, nil
}

func (f *fakeActivities) WriteStackRecord(ctx context.Context, in contract.WriteStackRecordInput) (*contract.StackRecordResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, in)
	return &contract.StackRecordResult{}, nil
}

func (f *fakeActivities) StorePlan(ctx context.Context, in contract.StorePlanInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans = append(f.plans, in)
	return nil
}

// DeliverHooks records the events an execution sends its stack's hooks.
func (f *fakeActivities) DeliverHooks(ctx context.Context, in contract.DeliverHooksInput) (*contract.DeliverHooksResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hookEvents = append(f.hookEvents, in.Event)
	return &contract.DeliverHooksResult{Failed: []string{}}, nil
}

// WantsHooks says every stack has a hook that wants every event (so
// DeliverHooks sees them all), unless noHooks.
func (f *fakeActivities) WantsHooks(ctx context.Context, in contract.DeliverHooksInput) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.noHooks, nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// unit builds a single-step unit.
func unit(i int, step string, deps ...int) contract.Unit {
	return contract.Unit{Index: i, Step: step, Count: 1, Kind: "exec", Deps: deps, Summary: "apply " + step}
}

func newEnv(t *testing.T, f *fakeActivities) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	// Executions run under the id their input calls for (stack s1's lock).
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: StackWorkflowID("s1")})
	f.register(env)
	return env
}

// testDryRunID is a dry-run id of stack s1 as the starter forms them.
const testDryRunID = "dryrun-s1-00000000-0000-4000-8000-000000000000"

func applyInput(onFailure model.OnFailure, parallelism int) ApplyInput {
	return ApplyInput{
		Settings: Settings{ExecutionID: "stack-s1", OnFailure: onFailure, Parallelism: parallelism},
		StackID:  "s1", SnapshotHash: "h1",
	}
}

func reportOf(t *testing.T, err error) model.Report {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("want an application error with a report, got %v", err)
	}
	var r model.Report
	if err := app.Details(&r); err != nil {
		t.Fatalf("details: %v", err)
	}
	return r
}
