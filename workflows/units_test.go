package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// multiStep builds a unit of several steps run by one activity, naming
// its steps as the planner does for plans of a usual size.
func multiStep(i int, steps []string, deps ...int) contract.Unit {
	return contract.Unit{
		Index: i, Step: steps[0], Count: len(steps), Steps: steps, Batch: true, Kind: "exec",
		Deps: deps, Summary: "apply " + steps[0],
	}
}

// decide sends a decision once the execution waits, after reading its
// progress, and returns where both land.
func decide(t *testing.T, env *testsuite.TestWorkflowEnvironment, req model.DecisionRequest) (progress **model.ProgressPage, result *model.DecisionResult) {
	progress, result = new(*model.ProgressPage), new(model.DecisionResult)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
		if !assert.NoError(t, err) {
			return
		}
		assert.NoError(t, v.Get(progress))
		env.UpdateWorkflow(DecisionUpdate, "d1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(r any, err error) { *result, _ = r.(model.DecisionResult) },
		}, req)
	}, time.Minute)
	return progress, result
}

func TestMultiStepUnitDecisions(t *testing.T) {
	// One unit of three steps, b after a and c after b; b fails once.
	// first precedes the unit, after follows it.
	steps := []string{"exec/a", "exec/b", "exec/c"}
	build := func() *fakeActivities {
		f := newFake(unit(0, "exec/first"), multiStep(1, steps, 0), unit(2, "exec/after", 1))
		f.batches[1] = steps
		f.unitDeps["exec/b"] = []string{"exec/a"}
		f.unitDeps["exec/c"] = []string{"exec/b"}
		f.failures["exec/b"] = 1
		return f
	}
	tests := []struct {
		name        string
		req         model.DecisionRequest
		wantRerun   contract.UnitInput // the unit's second input: Rerun and Skip
		wantCreated int
		wantSkipped int
		wantStatus  map[string]model.Status
	}{
		{
			name:      "skip of the failed step reruns the unit without it",
			req:       model.DecisionRequest{Action: model.DecisionSkip, Step: "exec/b"},
			wantRerun: contract.UnitInput{Rerun: true, Skip: []string{"exec/b"}},
			// a (recalled), c, first and after created; b skipped.
			wantCreated: 4, wantSkipped: 1,
			wantStatus: map[string]model.Status{
				"exec/a": model.StatusSucceeded, "exec/b": model.StatusSkipped, "exec/c": model.StatusSucceeded,
				"exec/after": model.StatusSucceeded,
			},
		},
		{
			name:        "skip naming no step does the same",
			req:         model.DecisionRequest{Action: model.DecisionSkip},
			wantRerun:   contract.UnitInput{Rerun: true, Skip: []string{"exec/b"}},
			wantCreated: 4, wantSkipped: 1,
		},
		{
			name:        "retry reruns the whole unit",
			req:         model.DecisionRequest{Action: model.DecisionRetry, Step: "exec/b"},
			wantRerun:   contract.UnitInput{Rerun: true},
			wantCreated: 5,
			wantStatus: map[string]model.Status{
				"exec/a": model.StatusSucceeded, "exec/b": model.StatusSucceeded, "exec/c": model.StatusSucceeded,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := build()
			env := newEnv(t, f)
			progress, result := decide(t, env, tt.req)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
			require.NoError(t, env.GetWorkflowError())

			// While paused, the step b kept from running shows why.
			require.NotNil(t, *progress)
			p := *progress
			assert.Equal(t, model.ExecWaiting, p.Status)
			assert.Equal(t, []string{"exec/b"}, p.Waiting)
			// The unit's steps are listed in the unit's order, each with
			// what became of it.
			require.Len(t, p.Steps, 5)
			var ids []string
			for _, sp := range p.Steps {
				ids = append(ids, sp.ID)
			}
			assert.Equal(t, []string{"exec/first", "exec/a", "exec/b", "exec/c", "exec/after"}, ids)
			assert.Equal(t, model.StatusSucceeded, p.Steps[1].Status)
			assert.Equal(t, model.StatusWaiting, p.Steps[2].Status)
			assert.Equal(t, "boom in exec/b", p.Steps[2].Error)
			c := p.Steps[3]
			assert.Equal(t, model.StatusDepFailed, c.Status)
			assert.Equal(t, "dependency exec/b failed", c.Error)
			assert.Equal(t, model.DecisionResult{Step: "exec/b", Steps: []string{"exec/b"}, Action: tt.req.Action, Scope: model.DecisionScopeSteps}, *result)

			require.Len(t, f.batchInputs, 2, "the unit ran %d times", len(f.batchInputs))
			assert.False(t, f.batchInputs[0].Rerun)
			assert.Empty(t, f.batchInputs[0].Skip)
			assert.Equal(t, tt.wantRerun.Rerun, f.batchInputs[1].Rerun)
			assert.Equal(t, tt.wantRerun.Skip, f.batchInputs[1].Skip)
			assert.Equal(t, 1, f.runs["exec/a"], "a step done is not run again")
			assert.Equal(t, 1, f.runs["exec/after"])

			var res ApplyResult
			require.NoError(t, env.GetWorkflowResult(&res))
			assert.Equal(t, tt.wantCreated, res.Report.Created)
			assert.Equal(t, tt.wantSkipped, res.Report.Skipped)
			assert.Zero(t, res.Report.Failed)
			assert.Empty(t, f.compensated)
			if len(tt.wantStatus) > 0 {
				got := stepStatuses(t, env)
				for id, want := range tt.wantStatus {
					assert.Equal(t, want, got[id], id)
				}
			}
		})
	}
}

func TestMultiStepUnitSkipAccumulates(t *testing.T) {
	// A chain b → c → d → e after a. b fails and blocks the rest; on the
	// rerun without b, c fails: the second skip keeps b and adds c.
	steps := []string{"exec/a", "exec/b", "exec/c", "exec/d", "exec/e"}
	f := newFake(multiStep(0, steps))
	f.batches[0] = steps
	f.unitDeps["exec/c"] = []string{"exec/b"}
	f.unitDeps["exec/d"] = []string{"exec/c"}
	f.unitDeps["exec/e"] = []string{"exec/d"}
	f.failures["exec/b"] = -1
	f.failures["exec/c"] = -1
	env := newEnv(t, f)
	for k, at := range []time.Duration{time.Minute, 2 * time.Minute} {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(DecisionUpdate, fmt.Sprint("d", k), &testsuite.TestUpdateCallback{
				OnReject: func(err error) { t.Errorf("rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
			}, model.DecisionRequest{Action: model.DecisionSkip})
		}, at)
	}
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, f.batchInputs, 3)
	assert.Equal(t, []string{"exec/b"}, f.batchInputs[1].Skip)
	assert.Equal(t, []string{"exec/b", "exec/c"}, f.batchInputs[2].Skip)
	assert.Equal(t, 1, f.runs["exec/a"], "a step done is not run again")
	var res ApplyResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, 3, res.Report.Created) // a, d, e
	assert.Equal(t, 2, res.Report.Skipped) // b, c
}

func TestSkipOfAUnitWithNothingBlockedSkipsTheUnit(t *testing.T) {
	// Every step ran and one failed: skip lets the dependents run, as for
	// a single step, without running the unit again.
	steps := []string{"exec/a", "exec/b"}
	f := newFake(multiStep(0, steps), unit(1, "exec/after", 0))
	f.batches[0] = steps
	f.failures["exec/b"] = -1
	env := newEnv(t, f)
	_, result := decide(t, env, model.DecisionRequest{Action: model.DecisionSkip, Step: "exec/b"})
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, "exec/b", result.Step)
	assert.Len(t, f.batchInputs, 1)
	assert.Equal(t, 1, f.runs["exec/after"])
}

func TestMultiStepUnitRollbackCompensatesInReverseCompletionOrder(t *testing.T) {
	// first, then side, then the unit (a and a2 change, b fails, c is
	// blocked), one at a time. Rollback undoes the unit's changed steps
	// (in reverse order within it), then side, then first.
	steps := []string{"exec/a", "exec/a2", "exec/b", "exec/c"}
	f := newFake(unit(0, "exec/first"), unit(1, "exec/side"), multiStep(2, steps, 0))
	f.batches[2] = steps
	f.unitDeps["exec/c"] = []string{"exec/b"}
	f.failures["exec/b"] = -1
	env := newEnv(t, f)
	decide(t, env, model.DecisionRequest{Action: model.DecisionRollback, Step: "exec/b"})
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 1))
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Equal(t, []string{"exec/first", "exec/side", "exec/a", "exec/a2", "exec/b", "exec/c"}, f.order)
	assert.Equal(t, []string{"exec/a2", "exec/a", "exec/side", "exec/first"}, f.compensated)
	r := reportOf(t, err)
	assert.True(t, r.RolledBack)
	assert.Equal(t, 1, r.Failed)
	assert.Equal(t, []model.StepError{{Step: "exec/b", Error: "boom in exec/b"}}, r.Failures)
	// Each step of the unit shows what became of it.
	assert.Equal(t, map[string]model.Status{
		"exec/first": model.StatusRolledBack, "exec/side": model.StatusRolledBack,
		"exec/a": model.StatusRolledBack, "exec/a2": model.StatusRolledBack,
		"exec/b": model.StatusFailed, "exec/c": model.StatusDepFailed,
	}, stepStatuses(t, env))
}

func TestProgressNamesTheStepsOfARunningUnit(t *testing.T) {
	tests := []struct {
		name  string
		named bool
		want  []string
	}{
		{"a unit naming its steps lists each", true, []string{"exec/a", "exec/b", "exec/c"}},
		{"a unit of a plan too large to name them is one entry", false, []string{"exec/a (+2 more)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := []string{"exec/a", "exec/b", "exec/c"}
			u := multiStep(0, steps)
			if !tt.named {
				u.Steps = nil
			}
			f := newFake(u)
			f.batches[0] = steps
			f.hold["exec/a"] = 300 * time.Millisecond // the unit's Step: its hold is the unit's
			env := newEnv(t, f)
			var p model.ProgressPage
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
				require.NoError(t, err)
				require.NoError(t, v.Get(&p))
			}, 100*time.Millisecond)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
			require.NoError(t, env.GetWorkflowError())
			var ids []string
			for _, sp := range p.Steps {
				ids = append(ids, sp.ID)
				assert.Equal(t, model.StatusRunning, sp.Status, sp.ID)
			}
			assert.Equal(t, tt.want, ids)
			assert.Equal(t, 3, p.Total)
			assert.Equal(t, 1, p.Running)
		})
	}
}
