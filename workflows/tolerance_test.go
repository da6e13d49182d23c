package workflows

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// runUnitsWorkflow runs units with the executor under opts, as the
// execution workflows do, and returns the outcome.
func runUnitsWorkflow(ctx workflow.Context, opts ExecOptions, units []contract.Unit) (*Outcome, error) {
	ex := NewExecutor(ctx, opts, units, nil)
	if err := ex.Register(ctx); err != nil {
		return nil, err
	}
	return ex.Run(ctx)
}

func TestExecutorGroupTolerance(t *testing.T) {
	// install runs on n1..n3 in group g (one at a time, so a stopped run
	// leaves later installs unstarted); configure@n follows install@n.
	build := func() []contract.Unit {
		var units []contract.Unit
		for k, n := range []string{"n1", "n2", "n3"} {
			u := unit(k, "install@"+n)
			u.Node, u.Group, u.Task = n, "g", "install"
			units = append(units, u)
		}
		for k, n := range []string{"n1", "n2", "n3"} {
			u := unit(3+k, "configure@"+n, k)
			u.Node, u.Task = n, "configure"
			units = append(units, u)
		}
		return units
	}
	tests := []struct {
		name          string
		onFailure     model.OnFailure
		tolerance     map[string]int
		fail          []string
		wantFailed    bool
		wantCause     string
		wantTolerated []string
		wantRan       []string
		wantNotRan    []string
		wantStatus    map[string]model.Status
	}{
		{
			name: "within the tolerance the run goes on", onFailure: model.OnFailureStop,
			tolerance: map[string]int{"g": 1}, fail: []string{"install@n2"},
			wantTolerated: []string{"install@n2"},
			wantRan:       []string{"install@n3", "configure@n1", "configure@n3"},
			wantNotRan:    []string{"configure@n2"},
			wantStatus: map[string]model.Status{
				"install@n2": model.StatusFailed, "configure@n2": model.StatusDepFailed, "configure@n3": model.StatusSucceeded,
			},
		},
		{
			name: "within the tolerance pause does not wait", onFailure: model.OnFailurePause,
			tolerance: map[string]int{"g": 1}, fail: []string{"install@n1"},
			wantTolerated: []string{"install@n1"},
			wantRan:       []string{"install@n2", "install@n3", "configure@n2", "configure@n3"},
			wantNotRan:    []string{"configure@n1"},
		},
		{
			name: "within the tolerance rollback does not roll back", onFailure: model.OnFailureRollback,
			tolerance: map[string]int{"g": 2}, fail: []string{"install@n1", "install@n3"},
			wantTolerated: []string{"install@n1", "install@n3"},
			wantRan:       []string{"install@n2", "configure@n2"},
			wantNotRan:    []string{"configure@n1", "configure@n3"},
		},
		{
			name: "over the tolerance onFailure stop stops", onFailure: model.OnFailureStop,
			tolerance: map[string]int{"g": 1}, fail: []string{"install@n1", "install@n2"},
			wantFailed: true, wantCause: "group g: 2 nodes failed, fault_tolerance allows 1",
			wantTolerated: []string{"install@n1"},
			wantNotRan:    []string{"install@n3", "configure@n1", "configure@n2", "configure@n3"},
			wantStatus: map[string]model.Status{
				"install@n2": model.StatusFailed, "install@n3": model.StatusSkipped,
			},
		},
		{
			name: "zero tolerance stops at the first failure", onFailure: model.OnFailureStop,
			tolerance: map[string]int{"g": 0}, fail: []string{"install@n1"},
			wantFailed: true, wantCause: "fault_tolerance allows 0",
			wantNotRan: []string{"install@n2", "install@n3"},
		},
		{
			name: "a group without tolerance stops", onFailure: model.OnFailureStop,
			tolerance: map[string]int{"other": 3}, fail: []string{"install@n1"},
			wantFailed: true, wantCause: "boom in install@n1",
			wantNotRan: []string{"install@n2", "install@n3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(build()...)
			for _, id := range tt.fail {
				f.failures[id] = -1
			}
			env := newEnv(t, f)
			env.RegisterWorkflow(runUnitsWorkflow)
			opts := ExecOptions{ExecutionID: "tol", Mode: contract.ModeApply, OnFailure: tt.onFailure, Parallelism: 1, Tolerance: tt.tolerance}
			env.ExecuteWorkflow(runUnitsWorkflow, opts, f.plan.Units)
			require.NoError(t, env.GetWorkflowError())
			var out Outcome
			require.NoError(t, env.GetWorkflowResult(&out))
			require.Equal(t, tt.wantFailed, out.Failed, "failed = %v cause %q, want %v %q", out.Failed, out.Cause, tt.wantFailed, tt.wantCause)
			require.Contains(t, out.Cause, tt.wantCause, "failed = %v cause %q, want %v %q", out.Failed, out.Cause, tt.wantFailed, tt.wantCause)
			if !tt.wantFailed {
				require.NoError(t, out.Err(), "a run within its tolerance ended %s: %v", out.Status(), out.Err())
				require.Equal(t, model.ExecCompleted, out.Status(), "a run within its tolerance ended %s: %v", out.Status(), out.Err())
			}
			var tolerated []string
			for _, e := range out.Tolerated {
				tolerated = append(tolerated, e.Step)
			}
			require.True(t, sameSet(tolerated, tt.wantTolerated), "tolerated %v, want %v", tolerated, tt.wantTolerated)
			require.Equal(t, len(tt.fail), out.Report.Failed, "report %+v: every failure stays in it", out.Report)
			require.Len(t, out.Report.Failures, len(tt.fail), "report %+v: every failure stays in it", out.Report)
			require.Empty(t, f.compensated, "compensated")
			require.False(t, out.RolledBack, "compensated %v", f.compensated)
			for _, id := range tt.wantRan {
				assert.NotEqual(t, 0, f.runs[id], "%s did not run", id)
			}
			for _, id := range tt.wantNotRan {
				assert.Equal(t, 0, f.runs[id], "%s ran", id)
			}
			if len(tt.wantStatus) > 0 {
				statuses := stepStatuses(t, env)
				for id, want := range tt.wantStatus {
					assert.Equal(t, want, statuses[id], "%s is %s, want %s", id, statuses[id], want)
				}
			}
		})
	}
}

// skipping answers every step with a skipped result, as a false condition
// or an unselected task does; steps named "run*" change something.
type skipping struct{}

func (skipping) result(id string) contract.StepResult {
	if strings.HasPrefix(id, "run") {
		return contract.StepResult{StepID: id, Action: model.ActionRun, Outcome: model.OutcomeUpdated}
	}
	return contract.StepResult{StepID: id, Action: model.ActionNoop, Outcome: model.OutcomeSkipped}
}

func (s skipping) ApplyStep(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	return &contract.UnitResult{Attempt: 1, Steps: []contract.StepResult{s.result(in.Unit.Step)}}, nil
}

func (s skipping) ApplyBatch(ctx context.Context, in contract.UnitInput) (*contract.UnitResult, error) {
	res := &contract.UnitResult{Attempt: 1}
	for k := range in.Unit.Count {
		res.Steps = append(res.Steps, s.result(strings.Split(in.Unit.Step, ",")[k]))
	}
	res.Compact()
	return res, nil
}

func TestSkippedStepsShowAsSkipped(t *testing.T) {
	batch := func(i int, ids ...string) contract.Unit {
		return contract.Unit{Index: i, Step: strings.Join(ids, ","), Count: len(ids), Batch: true, Kind: "exec"}
	}
	units := []contract.Unit{
		unit(0, "skip-a"),
		unit(1, "run-b", 0), // a skipped step still releases its dependents
		batch(2, "skip-c", "skip-d"),
		batch(3, "skip-e", "run-f"),
	}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(skipping{}.ApplyStep, activity.RegisterOptions{Name: contract.ApplyStepName})
	env.RegisterActivityWithOptions(skipping{}.ApplyBatch, activity.RegisterOptions{Name: contract.ApplyBatchName})
	env.RegisterWorkflow(runUnitsWorkflow)
	env.ExecuteWorkflow(runUnitsWorkflow, ExecOptions{ExecutionID: "skip", Mode: contract.ModeApply}, units)
	require.NoError(t, env.GetWorkflowError())
	var out Outcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.False(t, out.Failed, "outcome %+v", out)
	require.Equal(t, 4, out.Report.Skipped, "outcome %+v", out)
	require.Equal(t, 2, out.Report.Updated, "outcome %+v", out)
	want := map[string]model.Status{
		"skip-a": model.StatusSkipped, "run-b": model.StatusSucceeded,
		"skip-c": model.StatusSkipped, "skip-d": model.StatusSkipped,
		"skip-e": model.StatusSkipped, "run-f": model.StatusSucceeded,
	}
	got := stepStatuses(t, env)
	for id, w := range want {
		assert.Equal(t, w, got[id], "%s is %s, want %s", id, got[id], w)
	}
}

func stepStatuses(t *testing.T, env *testsuite.TestWorkflowEnvironment) map[string]model.Status {
	t.Helper()
	v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
	require.NoError(t, err)
	var p model.ProgressPage
	require.NoError(t, v.Get(&p))
	out := map[string]model.Status{}
	for _, sp := range p.Steps {
		out[sp.ID] = sp.Status
	}
	require.NotEmpty(t, out, "progress %+v", p)
	require.False(t, slices.ContainsFunc(p.Steps, func(sp model.StepProgress) bool { return sp.ID == "" }), "progress %+v", p)
	return out
}
