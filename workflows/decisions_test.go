package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/model"
)

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
