package workflows

import (
	"context"
	"errors"
	"fmt"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	return f.shards[in.Shard], nil
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
	if f.failing(in.Unit.Step) {
		return nil, temporal.NewNonRetryableApplicationError("boom in "+in.Unit.Step, contract.StepFailedType, nil,
			contract.FailureDetails{StepID: in.Unit.Step, Attempt: 1, NothingToUndo: f.untouched[in.Unit.Step]})
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

func TestExecutorHonoursDependencies(t *testing.T) {
	// a → b, a → c, (b, c) → d, d → e; f independent.
	units := []contract.Unit{
		unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 0),
		unit(3, "exec/d", 1, 2), unit(4, "exec/e", 3), unit(5, "exec/f"),
	}
	f := newFake(units...)
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		for _, d := range u.Deps {
			dep := units[d].Step
			if f.startedAt[u.Step] < f.finishedAt[dep] {
				t.Errorf("%s started (t=%d) before its dependency %s finished (t=%d)", u.Step, f.startedAt[u.Step], dep, f.finishedAt[dep])
			}
		}
	}
	var res ApplyResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Report.Created != 6 || !res.Changed {
		t.Fatalf("report = %+v", res.Report)
	}
	if len(f.records) != 1 || !f.records[0].Changed || f.records[0].ExecutionID != "stack-s1" {
		t.Fatalf("stack record writes = %+v", f.records)
	}
}

func TestExecutorCapsParallelism(t *testing.T) {
	tests := []struct {
		name        string
		parallelism int
		units       int
		want        int
	}{
		{"cap 1 runs one at a time", 1, 6, 1},
		{"cap 4", 4, 20, 4},
		{"default cap", 0, 25, contract.DefaultParallelism},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var units []contract.Unit
			for i := range tt.units {
				units = append(units, unit(i, fmt.Sprintf("exec/u%d", i)))
			}
			f := newFake(units...)
			for _, u := range units {
				f.hold[u.Step] = 20 * time.Millisecond
			}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput("", tt.parallelism))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if f.maxInflight != tt.want {
				t.Fatalf("max in flight = %d, want %d", f.maxInflight, tt.want)
			}
			if len(f.order) != tt.units {
				t.Fatalf("ran %d units, want %d", len(f.order), tt.units)
			}
		})
	}
}

func TestExecutorStrategyCapsCopiesOfATask(t *testing.T) {
	var units []contract.Unit
	for i := range 8 {
		u := unit(i, fmt.Sprintf("restart@n%d", i))
		u.Task, u.Strategy, u.Node = "restart", 2, fmt.Sprintf("n%d", i)
		units = append(units, u)
	}
	for i := range 4 { // another task, uncapped, runs alongside
		u := unit(8+i, fmt.Sprintf("ping@n%d", i))
		u.Task = "ping"
		units = append(units, u)
	}
	f := newFake(units...)
	for _, u := range units {
		f.hold[u.Step] = 20 * time.Millisecond
	}
	env := newEnv(t, f)
	in := applyInput("", 10)
	in.ClusterID = "c1"
	env.ExecuteWorkflow(ApplyWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if f.maxPerTask["restart"] != 2 {
		t.Fatalf("restart copies at once = %d, want 2", f.maxPerTask["restart"])
	}
	if f.maxInflight <= 2 {
		t.Fatalf("max in flight = %d: the uncapped task should run beside the capped one", f.maxInflight)
	}
	if q := f.queues["restart@n3"]; q != NodeTaskQueue("c1", "n3") {
		t.Fatalf("restart@n3 ran on queue %q, want %q", q, NodeTaskQueue("c1", "n3"))
	}
	if q := f.queues["ping@n0"]; q == "" || strings.HasPrefix(q, "cairn-node-") {
		t.Fatalf("control-plane step ran on queue %q", q)
	}
}

func TestExecutorAnyOf(t *testing.T) {
	tests := []struct {
		name     string
		failing  []string
		wantRuns bool
	}{
		{"one member suffices", []string{"exec/a"}, true},
		{"all members failed", []string{"exec/a", "exec/b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := unit(2, "exec/c")
			c.AnyOf = [][]int{{0, 1}}
			f := newFake(unit(0, "exec/a"), unit(1, "exec/b"), c)
			for _, id := range tt.failing {
				f.failures[id] = -1
			}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureContinue, 10))
			ran := f.runs["exec/c"] > 0
			if ran != tt.wantRuns {
				t.Fatalf("exec/c ran = %v, want %v", ran, tt.wantRuns)
			}
			r := reportOf(t, env.GetWorkflowError())
			if r.Failed != len(tt.failing) {
				t.Fatalf("failed = %d, want %d", r.Failed, len(tt.failing))
			}
		})
	}
}

func TestExecutorOnFailureModes(t *testing.T) {
	// a → b → c (c fails); x → y independent and slower; z depends on c.
	build := func() *fakeActivities {
		f := newFake(
			unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 1),
			unit(3, "exec/x"), unit(4, "exec/y", 3), unit(5, "exec/z", 2),
		)
		f.failures["exec/c"] = -1
		f.hold["exec/x"] = 300 * time.Millisecond
		f.hold["exec/y"] = 300 * time.Millisecond
		return f
	}
	tests := []struct {
		mode            model.OnFailure
		wantErrType     string
		wantCompensated []string
		wantRan         []string
		wantNotRan      []string
		wantRecord      bool
	}{
		// The failed step is compensated too: it may have half-applied.
		{model.OnFailureRollback, ErrRolledBack, []string{"exec/c", "exec/b", "exec/a", "exec/x"}, nil, []string{"exec/z", "exec/y"}, false},
		{model.OnFailureStop, ErrFailed, nil, []string{"exec/x"}, []string{"exec/z", "exec/y"}, true},
		{model.OnFailureContinue, ErrFailed, nil, []string{"exec/x", "exec/y"}, []string{"exec/z"}, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			f := build()
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(tt.mode, 2))
			err := env.GetWorkflowError()
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != tt.wantErrType {
				t.Fatalf("error = %v, want type %s", err, tt.wantErrType)
			}
			if !strings.Contains(app.Message(), "boom in exec/c") {
				t.Fatalf("error %q does not name the cause", app.Message())
			}
			if !sameSet(f.compensated, tt.wantCompensated) {
				t.Fatalf("compensated %v, want %v", f.compensated, tt.wantCompensated)
			}
			// A dependent is undone before what it depends on.
			for _, pair := range [][2]string{{"exec/c", "exec/b"}, {"exec/b", "exec/a"}} {
				if i, j := slices.Index(f.compensated, pair[0]), slices.Index(f.compensated, pair[1]); i >= 0 && j >= 0 && i > j {
					t.Fatalf("%s undone after %s: %v", pair[0], pair[1], f.compensated)
				}
			}
			for _, id := range tt.wantRan {
				if f.runs[id] == 0 {
					t.Errorf("%s did not run", id)
				}
			}
			for _, id := range tt.wantNotRan {
				if f.runs[id] != 0 {
					t.Errorf("%s ran", id)
				}
			}
			if (len(f.records) == 1) != tt.wantRecord {
				t.Fatalf("record writes = %d, want record %v", len(f.records), tt.wantRecord)
			}
			r := reportOf(t, err)
			if r.Failed != 1 || len(r.Failures) != 1 || r.Failures[0].Step != "exec/c" {
				t.Fatalf("report = %+v", r)
			}
			if r.RolledBack != (tt.mode == model.OnFailureRollback) {
				t.Fatalf("rolledBack = %v", r.RolledBack)
			}
		})
	}
}

func TestExecutorCompensatesInReverseDependencyOrder(t *testing.T) {
	// A chain whose completion order and dependency order agree, plus a
	// fan-in: d depends on b and c; e fails after d.
	f := newFake(
		unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 0),
		unit(3, "exec/d", 1, 2), unit(4, "exec/e", 3),
	)
	f.hold["exec/b"] = 30 * time.Millisecond
	f.failures["exec/e"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 1))
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("want failure")
	}
	// Compensation of e is attempted (it may have half-applied), then d,
	// then b and c (most recent first), then a.
	want := []string{"exec/e", "exec/d", "exec/c", "exec/b", "exec/a"}
	if !slices.Equal(f.compensated, want) {
		t.Fatalf("compensation order %v, want %v", f.compensated, want)
	}
}

func TestExecutorCompensatesOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name      string
		untouched bool
		want      []string
	}{
		{"a failed step that changed nothing gets no compensation", true, []string{"exec/d", "exec/c", "exec/b", "exec/a"}},
		{"a failed step that may have changed something is compensated first", false, []string{"exec/e", "exec/d", "exec/c", "exec/b", "exec/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(
				unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 0),
				unit(3, "exec/d", 1, 2), unit(4, "exec/e", 3),
			)
			f.hold["exec/b"] = 30 * time.Millisecond
			f.failures["exec/e"] = -1
			f.untouched = map[string]bool{"exec/e": tt.untouched}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 1))
			r := reportOf(t, env.GetWorkflowError())
			require.True(t, r.RolledBack)
			require.Equal(t, tt.want, f.compensated)
			require.Len(t, r.Failures, 1)
			assert.Equal(t, "exec/e", r.Failures[0].Step)
		})
	}
}

func TestExecutorCompensationFailuresAreNamed(t *testing.T) {
	f := newFake(unit(0, "stuck/a"), unit(1, "irreversible/b", 0), unit(2, "exec/c", 1))
	f.failures["exec/c"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 10))
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatal(err)
	}
	for _, want := range []string{"boom in exec/c", "stuck/a: cannot restore stuck/a", "irreversible/b: irreversible"} {
		if !strings.Contains(app.Message(), want) {
			t.Errorf("error %q lacks %q", app.Message(), want)
		}
	}
	if r := reportOf(t, err); len(r.CompensationFailures) != 2 {
		t.Fatalf("compensation failures = %+v", r.CompensationFailures)
	}
}

func TestCancelRollsBackAnApply(t *testing.T) {
	f := newFake(unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/slow", 1), unit(3, "exec/after", 2))
	f.hold["exec/slow"] = 2 * time.Second
	env := newEnv(t, f)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	err := env.GetWorkflowError()
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("want cancelled, got %v", err)
	}
	if f.runs["exec/after"] != 0 {
		t.Fatal("a step started after cancellation")
	}
	// The interrupted step is compensated too (it may have half-applied).
	want := []string{"exec/slow", "exec/b", "exec/a"}
	if !slices.Equal(f.compensated, want) {
		t.Fatalf("compensated %v, want %v", f.compensated, want)
	}
	if len(f.records) != 0 {
		t.Fatal("a rolled-back apply wrote the stack record")
	}
}

func TestFailOnErrorFalseSkips(t *testing.T) {
	a := unit(0, "exec/a")
	a.ContinueOnError = true
	f := newFake(a, unit(1, "exec/b", 0))
	f.failures["exec/a"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res ApplyResult
	_ = env.GetWorkflowResult(&res)
	if res.Report.Skipped != 1 || res.Report.Created != 1 || f.runs["exec/b"] != 1 {
		t.Fatalf("report %+v, b runs %d", res.Report, f.runs["exec/b"])
	}
}

func TestConfigErrorIsNotRetried(t *testing.T) {
	f := newFake(unit(0, "file/bad"))
	f.configErrs["file/bad"] = true
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureStop, 10))
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "spec.mode: invalid") {
		t.Fatalf("error = %v", err)
	}
	if n := len(f.order); n != 1 {
		t.Fatalf("config error ran %d times, want 1", n)
	}
}

func TestBatchReportsEachStep(t *testing.T) {
	b := contract.Unit{Index: 0, Step: "file/f0", Count: 3, Batch: true, Kind: "file", Summary: "apply 3 files"}
	f := newFake(b, unit(1, "exec/after", 0))
	f.batches[0] = []string{"file/f0", "file/f1", "file/f2"}
	f.failures["file/f1"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureContinue, 10))
	r := reportOf(t, env.GetWorkflowError())
	if r.Created != 2 || r.Failed != 1 || r.Skipped != 1 {
		t.Fatalf("report = %+v", r)
	}
	if len(r.Failures) != 1 || r.Failures[0].Step != "file/f1" {
		t.Fatalf("failures = %+v", r.Failures)
	}
}

type decisionCase struct {
	action          model.Decision
	wantErr         bool
	wantRuns        int // runs of the failing step
	wantAfterRan    bool
	wantCompensated []string
}

func TestPauseWaitsForADecision(t *testing.T) {
	tests := []decisionCase{
		{action: model.DecisionRetry, wantRuns: 2, wantAfterRan: true},
		{action: model.DecisionSkip, wantRuns: 1, wantAfterRan: true},
		{action: model.DecisionRollback, wantErr: true, wantRuns: 1, wantCompensated: []string{"exec/flaky", "exec/first"}},
		{action: model.DecisionAbort, wantErr: true, wantRuns: 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.action), func(t *testing.T) {
			f := newFake(unit(0, "exec/first"), unit(1, "exec/flaky", 0), unit(2, "exec/after", 1))
			f.failures["exec/flaky"] = 1 // fails once
			env := newEnv(t, f)
			var progress *model.ProgressPage
			var result model.DecisionResult
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
				if err != nil {
					t.Errorf("query: %v", err)
					return
				}
				_ = v.Get(&progress)
				env.UpdateWorkflow(DecisionUpdate, "d1", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { t.Errorf("rejected: %v", err) },
					OnAccept:   func() {},
					OnComplete: func(r any, err error) { result, _ = r.(model.DecisionResult) },
				}, model.DecisionRequest{Action: tt.action})
			}, time.Minute)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
			if progress == nil || progress.Status != model.ExecWaiting || !slices.Equal(progress.Waiting, []string{"exec/flaky"}) {
				t.Fatalf("progress while paused = %+v", progress)
			}
			if result.Step != "exec/flaky" {
				t.Fatalf("decision applied to %q", result.Step)
			}
			err := env.GetWorkflowError()
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if f.runs["exec/flaky"] != tt.wantRuns {
				t.Fatalf("flaky ran %d times, want %d", f.runs["exec/flaky"], tt.wantRuns)
			}
			if ran := f.runs["exec/after"] > 0; ran != tt.wantAfterRan {
				t.Fatalf("after ran = %v", ran)
			}
			if !slices.Equal(f.compensated, tt.wantCompensated) {
				t.Fatalf("compensated %v, want %v", f.compensated, tt.wantCompensated)
			}
		})
	}
}

func TestDecisionValidatorRejects(t *testing.T) {
	tests := []struct {
		name    string
		req     model.DecisionRequest
		paused  bool
		wantMsg string
	}{
		{"unknown action", model.DecisionRequest{Action: "explode"}, true, `unknown decision "explode"`},
		{"nothing waiting", model.DecisionRequest{Action: model.DecisionRetry}, false, "no step is waiting"},
		{"step not waiting", model.DecisionRequest{Action: model.DecisionSkip, Step: "exec/first"}, true, `step "exec/first" is not waiting`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, "exec/first"), unit(1, "exec/flaky", 0), unit(2, "exec/slow"))
			if tt.paused {
				f.failures["exec/flaky"] = -1
			} else {
				f.hold["exec/slow"] = 3 * time.Second
			}
			env := newEnv(t, f)
			var rejected error
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(DecisionUpdate, "bad", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { rejected = err },
					OnAccept:   func() { t.Error("bad decision accepted") },
					OnComplete: func(any, error) {},
				}, tt.req)
				if tt.paused {
					env.UpdateWorkflow(DecisionUpdate, "abort", &testsuite.TestUpdateCallback{
						OnReject: func(err error) { t.Errorf("abort rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
					}, model.DecisionRequest{Action: model.DecisionAbort})
				}
			}, time.Second)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
			if rejected == nil || !strings.Contains(rejected.Error(), tt.wantMsg) {
				t.Fatalf("rejection = %v, want %q", rejected, tt.wantMsg)
			}
		})
	}
}

func TestProgressQueryPaginates(t *testing.T) {
	var units []contract.Unit
	for i := range 7 {
		units = append(units, unit(i, fmt.Sprintf("exec/s%d", i)))
	}
	f := newFake(units...)
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	v, err := env.QueryWorkflow(ProgressQuery, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	var p model.ProgressPage
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if p.Total != 7 || p.Done != 7 || p.Entries != 7 || len(p.Steps) != 3 || p.Steps[0].ID != "exec/s2" {
		t.Fatalf("progress = %+v", p)
	}
	if p.Status != model.ExecCompleted || p.Steps[0].Status != model.StatusSucceeded || p.Steps[0].Action != model.ActionCreate {
		t.Fatalf("step progress = %+v (status %s)", p.Steps[0], p.Status)
	}
}

func TestDryRunPlansWithoutChanging(t *testing.T) {
	f := newFake(unit(0, "exec/a"), unit(1, "exec/b", 0))
	f.failures["exec/a"] = -1 // a read error is reported, not fatal
	env := newEnv(t, f)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testDryRunID})
	env.ExecuteWorkflow(DryRunWorkflow, DryRunInput{Settings: Settings{ExecutionID: testDryRunID}, StackID: "s1", SnapshotHash: "h"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res DryRunResult
	_ = env.GetWorkflowResult(&res)
	if !f.noop || len(f.plans) != 1 || len(res.Failures) != 1 || res.ExecutionID != testDryRunID {
		t.Fatalf("dry-run result %+v, plans %+v", res, f.plans)
	}
	if len(f.records) != 0 || len(f.compensated) != 0 {
		t.Fatal("a dry-run recorded or compensated")
	}
}

func TestShardedPlanRunsEveryShard(t *testing.T) {
	// Two shards; a unit of the second depends on one of the first.
	s0 := []contract.Unit{unit(0, "exec/a"), unit(1, "exec/b", 0)}
	s1 := []contract.Unit{unit(2, "exec/c", 1), unit(3, "exec/d")}
	tests := []struct {
		name        string
		fail        string
		onFailure   model.OnFailure
		wantCreated int
		wantComp    []string
		wantRan     []string
	}{
		{"all succeed", "", model.OnFailureRollback, 4, nil, []string{"exec/a", "exec/b", "exec/c", "exec/d"}},
		{"later shard fails and earlier shards are undone", "exec/d", model.OnFailureRollback, 3,
			[]string{"exec/d", "exec/c", "exec/b", "exec/a"}, nil},
		{"continue fails dependents across shards", "exec/b", model.OnFailureContinue, 2, nil, []string{"exec/d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.plan = contract.PreparedPlan{Steps: 4, Shards: []contract.Shard{
				{Index: 0, First: 0, Units: 2, Steps: 2}, {Index: 1, First: 2, Units: 2, Steps: 2},
			}}
			f.shards = map[int][]contract.Unit{0: s0, 1: s1}
			if tt.fail != "" {
				f.failures[tt.fail] = -1
			}
			f.hold["exec/d"] = 20 * time.Millisecond
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(tt.onFailure, 10))
			err := env.GetWorkflowError()
			var r model.Report
			if tt.fail == "" {
				var res ApplyResult
				if err != nil {
					t.Fatal(err)
				}
				_ = env.GetWorkflowResult(&res)
				r = res.Report
			} else {
				r = reportOf(t, err)
			}
			if r.Created != tt.wantCreated {
				t.Fatalf("report %+v, want %d created", r, tt.wantCreated)
			}
			// The failing shard undoes its own steps (in parallel, in any
			// order) before the earlier shard's, which go latest first.
			if !sameSet(f.compensated, tt.wantComp) ||
				len(tt.wantComp) == 4 && (!sameSet(f.compensated[:2], tt.wantComp[:2]) || !slices.Equal(f.compensated[2:], tt.wantComp[2:])) {
				t.Fatalf("compensated %v, want %v", f.compensated, tt.wantComp)
			}
			for _, id := range tt.wantRan {
				if f.runs[id] == 0 {
					t.Errorf("%s did not run", id)
				}
			}
			if tt.onFailure == model.OnFailureContinue && f.runs["exec/c"] != 0 {
				t.Fatal("exec/c ran although its dependency in the first shard failed")
			}
		})
	}
}

// TestNodeQueueNames pins the routing function agents rely on: one queue
// per (cluster, node), whatever the ids hold.
func TestNodeQueueNames(t *testing.T) {
	tests := []struct{ cluster, node, want string }{
		{"c1", "n3", "cairn-node-2-c1-n3"},
		{"", "n1", "cairn-node-0--n1"},
		{"a", "b-c", "cairn-node-1-a-b-c"},
		{"a-b", "c", "cairn-node-3-a-b-c"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NodeTaskQueue(tt.cluster, tt.node), "NodeTaskQueue(%q, %q)", tt.cluster, tt.node)
	}
	assert.NotEqual(t, NodeTaskQueue("a", "b-c"), NodeTaskQueue("a-b", "c"))
	// No two pairs of a set of ids built from the separator share a queue.
	ids := []string{"", "-", "a", "a-", "-a", "a-b", "b-c", "c", "1", "1-a", "2-a-b", "a-1"}
	seen := map[string][2]string{}
	for _, c := range ids {
		for _, n := range ids {
			q := NodeTaskQueue(c, n)
			prev, dup := seen[q]
			require.False(t, dup, "cluster %q node %q and cluster %q node %q share queue %q", c, n, prev[0], prev[1], q)
			seen[q] = [2]string{c, n}
		}
	}
	opts := ExecOptions{ControlQueue: "cairn", Cluster: "c1"}
	for _, node := range []string{"", model.ControlPlane} {
		if got := opts.queueFor(node); got != "cairn" {
			t.Errorf("queueFor(%q) = %q", node, got)
		}
	}
}

func TestMetaBecomesRetryPolicy(t *testing.T) {
	opts := ExecOptions{ControlQueue: "cairn", NodeWait: time.Minute, StepTimeout: time.Hour, HeartbeatTimeout: time.Second}
	u := contract.Unit{Node: "n1", Meta: model.Meta{Retry: 3, Delay: "5s", Timeout: "90s"}}
	ao := opts.stepActivityOptions(&u)
	if ao.RetryPolicy.MaximumAttempts != 3+1+crashAttempts+handoverAttempts || ao.RetryPolicy.InitialInterval != 5*time.Second ||
		ao.RetryPolicy.BackoffCoefficient != 1 || ao.StartToCloseTimeout != 90*time.Second ||
		ao.ScheduleToStartTimeout != time.Minute || !slices.Contains(ao.RetryPolicy.NonRetryableErrorTypes, contract.ConfigErrorType) {
		t.Fatalf("options = %+v, policy %+v", ao, ao.RetryPolicy)
	}
	forever := contract.Unit{Meta: model.Meta{Retry: -1}}
	ao = opts.stepActivityOptions(&forever)
	if ao.RetryPolicy.MaximumAttempts != 0 || ao.ScheduleToStartTimeout != 0 || ao.StartToCloseTimeout != time.Hour {
		t.Fatalf("forever options = %+v", ao)
	}
}
