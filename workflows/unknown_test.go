package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/model"
)

// A step whose outcome is unknown waits for a decision whatever the
// failure policy says, shows as unknown while it waits, and each decision
// does what it says: retry runs it again, skip takes it as done without
// running it, rollback compensates, abort stops.
func TestUnknownOutcomeWaitsForADecision(t *testing.T) {
	tests := []struct {
		action          model.Decision
		onFailure       model.OnFailure
		wantErr         bool
		wantRuns        int
		wantAfterRan    bool
		wantTakenAsDone []string
		wantCompensated []string
		wantUnknown     int
	}{
		{action: model.DecisionRetry, onFailure: model.OnFailureRollback, wantRuns: 2, wantAfterRan: true},
		{action: model.DecisionSkip, onFailure: model.OnFailureContinue, wantRuns: 1, wantAfterRan: true, wantTakenAsDone: []string{"exec/cut"}},
		{action: model.DecisionRollback, onFailure: model.OnFailureStop, wantErr: true, wantRuns: 1,
			wantCompensated: []string{"exec/cut", "exec/first"}, wantUnknown: 1},
		{action: model.DecisionAbort, onFailure: model.OnFailurePause, wantErr: true, wantRuns: 1, wantUnknown: 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.action)+"/"+string(tt.onFailure), func(t *testing.T) {
			cut := unit(1, "exec/cut", 0)
			cut.ContinueOnError = true // fail_on_error: false does not skip it either
			f := newFake(unit(0, "exec/first"), cut, unit(2, "exec/after", 1))
			f.unknown["exec/cut"] = 1
			env := newEnv(t, f)
			var progress *model.ProgressPage
			var result model.DecisionResult
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
				require.NoError(t, err)
				require.NoError(t, v.Get(&progress))
				env.UpdateWorkflow(DecisionUpdate, "d1", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { t.Errorf("rejected: %v", err) },
					OnAccept:   func() {},
					OnComplete: func(r any, err error) { result, _ = r.(model.DecisionResult) },
				}, model.DecisionRequest{Action: tt.action})
			}, time.Minute)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(tt.onFailure, 10))

			require.NotNil(t, progress)
			assert.Equal(t, model.ExecWaiting, progress.Status)
			assert.Equal(t, []string{"exec/cut"}, progress.Waiting)
			i := slices.IndexFunc(progress.Steps, func(s model.StepProgress) bool { return s.ID == "exec/cut" })
			require.GreaterOrEqual(t, i, 0)
			assert.Equal(t, model.StatusUnknown, progress.Steps[i].Status)
			assert.Contains(t, progress.Steps[i].Error, "may or may not have run")
			assert.Equal(t, "exec/cut", result.Step)

			err := env.GetWorkflowError()
			require.Equal(t, tt.wantErr, err != nil, "workflow error: %v", err)
			assert.Equal(t, tt.wantRuns, f.runs["exec/cut"], "runs of the step whose outcome was unknown")
			assert.Equal(t, tt.wantAfterRan, f.runs["exec/after"] > 0)
			assert.Equal(t, tt.wantTakenAsDone, f.takenAsDone)
			assert.Equal(t, tt.wantCompensated, f.compensated)
			if err != nil {
				r := reportOf(t, err)
				assert.Equal(t, tt.wantUnknown, r.Unknown)
				require.NotEmpty(t, r.Failures)
				assert.True(t, strings.HasPrefix(r.Failures[0].Error, "unknown:"), "failure %q", r.Failures[0].Error)
			}
		})
	}
}

// An executor tells the activities it holds unknown steps; without it (an
// older build) they report such a step failed.
func TestExecutorSaysItHoldsUnknownSteps(t *testing.T) {
	f := newFake(unit(0, "exec/only"))
	f.unknown["exec/only"] = 1
	env := newEnv(t, f)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(DecisionUpdate, "d1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, model.DecisionRequest{Action: model.DecisionRetry})
	}, time.Minute)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 10))
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 2, f.runs["exec/only"], "held, then retried once")
}
