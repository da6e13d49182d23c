package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// fleetRun is an apply of four independent steps where a, b and c fail
// once under onFailure pause, so three steps wait at the same time; the
// callback sends decisions while they wait and the results come back.
type fleetRun struct {
	f        *fakeActivities
	env      *testsuite.TestWorkflowEnvironment
	waiting  []string
	results  []model.DecisionResult
	rejected []error
}

func newFleetRun(t *testing.T) *fleetRun {
	f := newFake(unit(0, "exec/a"), unit(1, "exec/b"), unit(2, "exec/c"), unit(3, "exec/ok"))
	for _, s := range []string{"exec/a", "exec/b", "exec/c"} {
		f.failures[s] = 1
	}
	return &fleetRun{f: f, env: newEnv(t, f)}
}

// decide sends the decisions in order a minute into the run, after a
// progress query records what waits.
func (r *fleetRun) decide(t *testing.T, reqs ...model.DecisionRequest) {
	r.env.RegisterDelayedCallback(func() {
		v, err := r.env.QueryWorkflow(ProgressQuery, 0, 0)
		require.NoError(t, err)
		var p model.ProgressPage
		require.NoError(t, v.Get(&p))
		r.waiting = p.Waiting
		for k, req := range reqs {
			r.env.UpdateWorkflow(DecisionUpdate, string(rune('a'+k)), &testsuite.TestUpdateCallback{
				OnReject: func(err error) { r.rejected = append(r.rejected, err) },
				OnAccept: func() {},
				OnComplete: func(res any, err error) {
					assert.NoError(t, err)
					if d, ok := res.(model.DecisionResult); ok {
						r.results = append(r.results, d)
					}
				},
			}, req)
		}
	}, time.Minute)
	r.env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
}

func TestDecisionAllRetriesEveryWaitingStep(t *testing.T) {
	r := newFleetRun(t)
	r.decide(t, model.DecisionRequest{Action: model.DecisionRetry, All: true})

	assert.ElementsMatch(t, []string{"exec/a", "exec/b", "exec/c"}, r.waiting)
	require.Empty(t, r.rejected)
	require.Len(t, r.results, 1)
	assert.Equal(t, model.DecisionResult{
		Steps: []string{"exec/a", "exec/b", "exec/c"}, Action: model.DecisionRetry, Scope: model.DecisionScopeSteps,
	}, r.results[0])
	require.NoError(t, r.env.GetWorkflowError())
	for _, s := range []string{"exec/a", "exec/b", "exec/c"} {
		assert.Equal(t, 2, r.f.runs[s], s)
	}
	assert.Equal(t, 1, r.f.runs["exec/ok"])
}

func TestDecisionStepsAppliesToTheNamedSteps(t *testing.T) {
	r := newFleetRun(t)
	r.decide(t,
		model.DecisionRequest{Action: model.DecisionSkip, Steps: []string{"exec/c", "exec/a"}},
		model.DecisionRequest{Action: model.DecisionRetry},
	)

	require.Empty(t, r.rejected)
	require.Len(t, r.results, 2)
	// Each caller hears of its own decision once both are applied, in
	// either order.
	byAction := map[model.Decision]model.DecisionResult{}
	for _, res := range r.results {
		byAction[res.Action] = res
	}
	// Applied in unit order, whatever order the request named them in.
	assert.Equal(t, model.DecisionResult{
		Steps: []string{"exec/a", "exec/c"}, Action: model.DecisionSkip, Scope: model.DecisionScopeSteps,
	}, byAction[model.DecisionSkip])
	// With no step named, the one left waiting takes the next decision.
	assert.Equal(t, model.DecisionResult{
		Step: "exec/b", Steps: []string{"exec/b"}, Action: model.DecisionRetry, Scope: model.DecisionScopeSteps,
	}, byAction[model.DecisionRetry])
	require.NoError(t, r.env.GetWorkflowError())
	assert.Equal(t, 1, r.f.runs["exec/a"], "skipped a ran again")
	assert.Equal(t, 2, r.f.runs["exec/b"], "retried b did not run again")
	assert.Equal(t, 1, r.f.runs["exec/c"], "skipped c ran again")
}

func TestDecisionStepsIsAllOrNothing(t *testing.T) {
	r := newFleetRun(t)
	r.decide(t,
		model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a", "exec/ok", "exec/nope"}},
		model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a", "exec/a"}},
		model.DecisionRequest{Action: model.DecisionRetry, Step: "exec/a", All: true},
		model.DecisionRequest{Action: model.DecisionAbort, All: true},
	)

	require.Len(t, r.rejected, 3)
	assert.EqualError(t, r.rejected[0],
		`steps "exec/ok", "exec/nope" are not waiting for a decision (waiting: exec/a, exec/b, exec/c)`)
	assert.EqualError(t, r.rejected[1], `steps[1]: repeats "exec/a"`)
	assert.EqualError(t, r.rejected[2], "step: give one of step, steps or all")
	// The refused decision retried nothing: a ran once, and the abort
	// found all three still waiting.
	require.Len(t, r.results, 1)
	assert.Equal(t, model.DecisionResult{
		Steps: []string{"exec/a", "exec/b", "exec/c"}, Action: model.DecisionAbort, Scope: model.DecisionScopeExecution,
	}, r.results[0])
	require.Error(t, r.env.GetWorkflowError())
	for _, s := range []string{"exec/a", "exec/b", "exec/c"} {
		assert.Equal(t, 1, r.f.runs[s], s)
	}
}

// TestDecisionNotIssuedChangesNothing: a decision whose nonce the store
// does not vouch for (copied from another execution, or made up by
// someone reaching Temporal) is refused, and the steps it named keep
// waiting for the decision that is.
func TestDecisionNotIssuedChangesNothing(t *testing.T) {
	r := newFleetRun(t)
	var forged error
	var vouched []model.DecisionResult
	r.env.RegisterDelayedCallback(func() {
		send := func(id string, req model.DecisionRequest, done func(any, error)) {
			r.env.UpdateWorkflow(DecisionUpdate, id, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { done(nil, err) }, OnAccept: func() {}, OnComplete: done,
			}, req)
		}
		// The steps a decision names are its own while it is checked:
		// the next is sent once the forged one was refused.
		send("forged", model.DecisionRequest{Action: model.DecisionSkip, All: true, Nonce: "copied"}, func(_ any, err error) {
			forged = err
			send("vouched", model.DecisionRequest{Action: model.DecisionRetry, All: true, Nonce: "by:bob"}, func(res any, err error) {
				assert.NoError(t, err)
				if d, ok := res.(model.DecisionResult); ok {
					vouched = append(vouched, d)
				}
			})
		})
	}, time.Minute)
	r.env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))

	require.NoError(t, r.env.GetWorkflowError())
	var app *temporal.ApplicationError
	require.ErrorAs(t, forged, &app, "the forged decision: %v", forged)
	assert.Equal(t, contract.ActNotIssuedType, app.Type())
	require.Len(t, vouched, 1)
	assert.Equal(t, []string{"exec/a", "exec/b", "exec/c"}, vouched[0].Steps, "the forged skip held back a step")
	for _, s := range []string{"exec/a", "exec/b", "exec/c"} {
		assert.Equal(t, 2, r.f.runs[s], "%s was not retried (or was skipped)", s)
	}
}
