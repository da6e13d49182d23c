package workflows

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	graphprep "github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// graphSteps stands in for the step activities of a graph execution: the
// real PrepareGraph and RecordGraphRuns run over a real SQLite store, and
// this records which steps ran, in what order, and fails those it is told
// to.
type graphSteps struct {
	mu       sync.Mutex
	fail     map[string]bool
	clock    int
	started  map[string]int
	finished map[string]int
	inputs   []contract.UnitInput
	// store holds the steps of multi-step units.
	store store.Store
}

func newGraphSteps(fail ...string) *graphSteps {
	g := &graphSteps{fail: map[string]bool{}, started: map[string]int{}, finished: map[string]int{}}
	for _, f := range fail {
		g.fail[f] = true
	}
	return g
}

func (g *graphSteps) ApplyStep(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	g.mu.Lock()
	g.clock++
	g.started[in.Unit.Step] = g.clock
	g.inputs = append(g.inputs, in)
	g.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	g.mu.Lock()
	g.clock++
	g.finished[in.Unit.Step] = g.clock
	fail := g.fail[in.Unit.Step]
	g.mu.Unlock()
	if fail {
		return nil, temporal.NewNonRetryableApplicationError("boom in "+in.Unit.Step, contract.StepFailedType, nil,
			contract.FailureDetails{StepID: in.Unit.Step, Attempt: 1})
	}
	outcome := model.OutcomeUpdated
	if in.Noop {
		outcome = model.OutcomeUnchanged
	}
	return &contract.UnitResult{Attempt: 1, Steps: []contract.StepResult{{
		StepID: in.Unit.Step, Action: model.ActionRun, Outcome: outcome,
	}}}, nil
}

// ApplyBatch runs a multi-step unit as the real activity does: its steps
// (from the store) in order, a step whose dependency in the unit failed
// blocked, every step recorded as if it ran alone.
func (g *graphSteps) ApplyBatch(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	raw, err := g.store.GetStepData(ctx, in.ExecutionID, contract.UnitKey(in.Unit.Index), contract.DataUnit)
	if err != nil {
		return nil, err
	}
	var steps []struct {
		ID   string     `json:"id"`
		Deps []string   `json:"deps"`
		Meta model.Meta `json:"meta"`
	}
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, err
	}
	res := &contract.UnitResult{Attempt: 1}
	notOK := map[string]bool{}
	for _, s := range steps {
		r := contract.StepResult{StepID: s.ID, Action: model.ActionRun}
		for _, d := range s.Deps {
			if notOK[d] {
				r.Outcome, r.Blocked = model.OutcomeSkipped, d
				break
			}
		}
		if r.Blocked != "" {
			notOK[s.ID] = true
			res.Steps = append(res.Steps, r)
			continue
		}
		one := in
		one.Unit.Step = s.ID
		one.Noop = in.Noop || s.Meta.Noop // noop is per step in a unit
		single, err := g.ApplyStep(ctx, one)
		if err != nil {
			notOK[s.ID] = true
			r.Outcome, r.Error = model.OutcomeFailed, ErrorMessage(err)
			res.Steps = append(res.Steps, r)
			continue
		}
		res.Steps = append(res.Steps, single.Steps...)
	}
	return res, nil
}

func (g *graphSteps) ran(step string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.started[step]
	return ok
}

// graphFixture is a cluster of three nodes (two computes, one controller)
// in a real store.
func graphFixture(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.PutRelease(ctx, &model.Release{ID: "rel", Name: "rel"}))
	err = st.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", ReleaseID: "rel", Nodes: []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"controller"}},
		{ID: "n2", Name: "n2", Roles: []string{"compute"}},
		{ID: "n3", Name: "n3", Roles: []string{"compute"}},
	}})
	require.NoError(t, err)
	return st
}

func putReleaseGraph(t *testing.T, st store.Store, typ string, tasks ...*model.Task) {
	t.Helper()
	g := &model.StoredGraph{Layer: model.LayerRelease, OwnerID: "rel", Type: typ, Graph: &model.Graph{Type: typ, Tasks: tasks}}
	require.NoError(t, st.PutGraph(context.Background(), g))
}

func shellTask(id string, roles ...string) *model.Task {
	return &model.Task{ID: id, Type: "shell", Roles: roles, Parameters: map[string]any{"cmd": "true"}}
}

func graphEnv(t *testing.T, st store.Store, steps *graphSteps) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: GraphWorkflowID("c1")})
	acts := activities.New(activities.Deps{Store: st})
	g := activities.NewGraphActivities(acts, graphprep.NewPreparer(st, nil, graphprep.Files{}))
	env.RegisterWorkflow(ShardWorkflow)
	env.RegisterActivityWithOptions(g.PrepareGraph, activity.RegisterOptions{Name: contract.PrepareGraphName})
	env.RegisterActivityWithOptions(g.RecordGraphRuns, activity.RegisterOptions{Name: contract.RecordGraphRunsName})
	env.RegisterActivityWithOptions(acts.StorePlan, activity.RegisterOptions{Name: contract.StorePlanName})
	env.RegisterActivityWithOptions(acts.LoadUnits, activity.RegisterOptions{Name: contract.LoadUnitsName})
	env.RegisterActivityWithOptions(steps.ApplyStep, activity.RegisterOptions{Name: contract.ApplyStepName})
	env.RegisterActivityWithOptions(steps.ApplyBatch, activity.RegisterOptions{Name: contract.ApplyBatchName})
	registerAcceptStart(env)
	steps.store = st
	return env
}

// graphInput is the input the starter gives a request of types on c1 that
// the API checked and pinned.
func graphInput(t *testing.T, st store.Store, onFailure model.OnFailure, types ...string) GraphExecutionInput {
	t.Helper()
	p := graphprep.NewPreparer(st, nil, graphprep.Files{})
	checked, err := p.Check(context.Background(), contract.GraphRequest{ClusterID: "c1", Types: types, OnFailure: onFailure})
	require.NoError(t, err)
	req, err := p.Pin(context.Background(), checked)
	require.NoError(t, err)
	return GraphExecutionInput{
		Settings: Settings{ExecutionID: "graph-c1", ClusterID: "c1", OnFailure: onFailure},
		Request:  req,
	}
}

func TestGraphTypesRunInOrder(t *testing.T) {
	st := graphFixture(t)
	putReleaseGraph(t, st, "first", shellTask("prepare", "*"), &model.Task{
		ID: "check", Type: "shell", Roles: []string{"compute"}, Requires: []string{"prepare"}, Parameters: map[string]any{"cmd": "true"},
	})
	putReleaseGraph(t, st, "second", shellTask("prepare", "*"), shellTask("finish", "controller"))
	steps := newGraphSteps()
	env := graphEnv(t, st, steps)
	env.ExecuteWorkflow(GraphExecutionWorkflow, graphInput(t, st, "", "first", "second"))
	require.NoError(t, env.GetWorkflowError())
	var res GraphExecutionResult
	require.NoError(t, env.GetWorkflowResult(&res))
	first := []string{"first/prepare@n1", "first/prepare@n2", "first/prepare@n3", "first/check@n2", "first/check@n3"}
	second := []string{"second/prepare@n1", "second/prepare@n2", "second/prepare@n3", "second/finish@n1"}
	lastFirst := 0
	for _, s := range first {
		require.True(t, steps.ran(s), "%s did not run", s)
		lastFirst = max(lastFirst, steps.finished[s])
	}
	require.True(t, steps.ran("first@master"), "the barrier of type first ran at %d, before its last step finished at %d", steps.started["first@master"], lastFirst)
	require.GreaterOrEqual(t, steps.started["first@master"], lastFirst, "the barrier of type first ran at %d, before its last step finished at %d", steps.started["first@master"], lastFirst)
	for _, s := range second {
		require.True(t, steps.ran(s), "%s did not run", s)
		assert.GreaterOrEqual(t, steps.started[s], steps.finished["first@master"], "%s (type second) started at %d, before type first ended at %d", s, steps.started[s], steps.finished["first@master"])
	}
	// Each type ends with its barrier step.
	require.Equal(t, len(first)+len(second)+2, res.Report.Updated, "report = %+v", res.Report)
	require.Equal(t, 0, res.Report.Failed, "report = %+v", res.Report)
	require.Equal(t, 11, res.Steps, "report = %+v", res.Report)
	require.Len(t, res.Snapshots, 2, "snapshots = %v, want one merged graph per type", res.Snapshots)
	require.NotEqual(t, res.Snapshots[1], res.Snapshots[0], "snapshots = %v, want one merged graph per type", res.Snapshots)
}

func TestGraphFailureAbortsLaterTypes(t *testing.T) {
	tests := []struct {
		name      string
		onFailure model.OnFailure
	}{
		{"stop (the default)", ""},
		{"continue", model.OnFailureContinue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := graphFixture(t)
			putReleaseGraph(t, st, "first", shellTask("a", "*"), shellTask("b", "*"))
			putReleaseGraph(t, st, "second", shellTask("c", "*"))
			steps := newGraphSteps("first/a@n2")
			env := graphEnv(t, st, steps)
			env.ExecuteWorkflow(GraphExecutionWorkflow, graphInput(t, st, tt.onFailure, "first", "second"))
			err := env.GetWorkflowError()
			require.Error(t, err, "the execution succeeded with a failed step")
			require.Contains(t, err.Error(), "boom in first/a@n2", "error %q does not name the failed step", err)
			for _, s := range []string{"second/c@n1", "second/c@n2", "second/c@n3", "first@master"} {
				assert.False(t, steps.ran(s), "%s ran after type first failed", s)
			}
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app, "want an application error, got %v", err)
			var report model.Report
			require.NoError(t, app.Details(&report))
			require.Equal(t, 1, report.Failed, "report = %+v, want 1 failed and type second skipped", report)
			require.GreaterOrEqual(t, report.Skipped, 3, "report = %+v, want 1 failed and type second skipped", report)
		})
	}
}

func TestGraphGroupFaultTolerance(t *testing.T) {
	group := func(tolerance string) *model.Task {
		return &model.Task{ID: "computes", Type: model.TaskGroup, Roles: []string{"compute", "controller"}, FaultTolerance: tolerance}
	}
	member := func(id string, requires ...string) *model.Task {
		return &model.Task{ID: id, Type: "shell", Groups: []string{"computes"}, Requires: requires, Parameters: map[string]any{"cmd": "true"}}
	}
	tests := []struct {
		name      string
		tolerance string
		fail      []string
		wantErr   string
		tolerated int
	}{
		{"one node of three tolerated by count", "1", []string{"install@n2"}, "", 1},
		{"one node tolerated by percentage", "34%", []string{"install@n3"}, "", 1},
		{"negative count: all but two", "-2", []string{"install@n2"}, "", 1},
		{"two failures on one node count once", "1", []string{"install@n2", "extra@n2"}, "", 2},
		{"two nodes exceed a tolerance of one", "1", []string{"install@n2", "install@n3"}, "2 nodes failed, fault_tolerance allows 1", 0},
		{"zero tolerance fails", "0", []string{"install@n2"}, "fault_tolerance allows 0", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := graphFixture(t)
			putReleaseGraph(t, st, "default", group(tt.tolerance), member("install"), member("extra"), member("configure", "install"))
			steps := newGraphSteps(tt.fail...)
			env := graphEnv(t, st, steps)
			env.ExecuteWorkflow(GraphExecutionWorkflow, graphInput(t, st, ""))
			err := env.GetWorkflowError()
			if tt.wantErr != "" {
				require.Error(t, err, "err = %v, want %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "err = %v, want %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err, "failures within the tolerance failed the execution")
			var res GraphExecutionResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.Len(t, res.Tolerated, tt.tolerated, "tolerated")
			failedNode := strings.TrimPrefix(tt.fail[0][strings.Index(tt.fail[0], "@"):], "@")
			assert.False(t, steps.ran("configure@"+failedNode), "configure ran on %s after install failed there", failedNode)
			for _, n := range []string{"n1", "n2", "n3"} {
				if n != failedNode {
					assert.True(t, steps.ran("configure@"+n), "configure did not run on healthy node %s", n)
				}
			}
		})
	}
}

func TestGraphDryRunAndNoop(t *testing.T) {
	st := graphFixture(t)
	putReleaseGraph(t, st, "default", shellTask("a", "*"), &model.Task{ID: "off", Type: model.TaskSkipped, Roles: []string{"*"}})

	t.Run("dry run plans without running a step", func(t *testing.T) {
		steps := newGraphSteps()
		env := graphEnv(t, st, steps)
		id := GraphDryRunWorkflowID("c1", "00000000-0000-4000-8000-000000000000")
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
		in := graphInput(t, st, "")
		in.ExecutionID = id
		in.Request.DryRun = true
		env.ExecuteWorkflow(GraphExecutionWorkflow, in)
		require.NoError(t, env.GetWorkflowError())
		var res GraphExecutionResult
		require.NoError(t, env.GetWorkflowResult(&res))
		require.Empty(t, steps.inputs, "a dry run ran %d steps", len(steps.inputs))
		require.NotNil(t, res.DryRun, "plan = %+v", res.DryRun)
		require.Len(t, res.DryRun.Steps, 6, "plan = %+v", res.DryRun)
		require.Equal(t, 3, res.Plan.Run, "plan = %+v", res.DryRun)
		require.Equal(t, 3, res.Plan.Noop, "plan = %+v", res.DryRun)
		plan, err := graphprep.ReadPlan(context.Background(), st, id)
		require.NoError(t, err, "stored plan = %+v, %v", plan, err)
		require.Len(t, plan.Steps, 6, "stored plan = %+v, %v", plan, err)
	})
	t.Run("noop runs every step as its noop version", func(t *testing.T) {
		steps := newGraphSteps()
		env := graphEnv(t, st, steps)
		in := graphInput(t, st, "")
		in.ExecutionID = "" // its own: "graph-c1.<run>"
		in.Request.Noop = true
		env.ExecuteWorkflow(GraphExecutionWorkflow, in)
		require.NoError(t, env.GetWorkflowError())
		require.Len(t, steps.inputs, 6, "ran %d steps, want 6", len(steps.inputs))
		for _, in := range steps.inputs {
			require.True(t, in.Noop, "step %s ran for real in a noop execution", in.Unit.Step)
		}
	})
}
