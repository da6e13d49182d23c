package workflows

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
)

// upserts records the search attributes a test environment's workflows
// (parent and children alike) upsert.
type upserts struct {
	mu       sync.Mutex
	approval []string
	// awaiting holds CairnAwaiting's values in order; "" is an unset.
	awaiting []string
}

// recordUpserts makes env record every typed upsert.
func recordUpserts(env *testsuite.TestWorkflowEnvironment) *upserts {
	u := &upserts{}
	unset := temporal.NewSearchAttributes(searchattr.Awaiting.ValueUnset())
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		u.mu.Lock()
		defer u.mu.Unlock()
		if v, ok := sa.GetKeyword(searchattr.Approval); ok {
			u.approval = append(u.approval, v)
		}
		if v, ok := sa.GetKeyword(searchattr.Awaiting); ok {
			u.awaiting = append(u.awaiting, v)
		} else if reflect.DeepEqual(sa, unset) {
			u.awaiting = append(u.awaiting, "")
		}
	}).Return(nil)
	return u
}

func (u *upserts) awaited() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.awaiting...)
}

// sendDecision sends a decision Update to the workflow id ("" for the one the
// test started) and fails the test when it is rejected.
func sendDecision(t *testing.T, env *testsuite.TestWorkflowEnvironment, id string, action model.Decision) {
	t.Helper()
	cb := &testsuite.TestUpdateCallback{
		OnReject: func(err error) { t.Errorf("decision rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
	}
	if id == "" {
		env.UpdateWorkflow(DecisionUpdate, "d-"+string(action), cb, model.DecisionRequest{Action: action})
		return
	}
	require.NoError(t, env.UpdateWorkflowByID(id, DecisionUpdate, "d-"+string(action), cb, model.DecisionRequest{Action: action}))
}

func queryProgress(t *testing.T, env *testsuite.TestWorkflowEnvironment) model.ProgressPage {
	t.Helper()
	v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
	require.NoError(t, err)
	var p model.ProgressPage
	require.NoError(t, v.Get(&p))
	return p
}

// TestPauseSetsCairnAwaiting: a step paused for a decision sets
// CairnAwaiting to "decision" (and the progress query says so); the
// decision, or a cancellation, unsets it. Executions that do not pause
// never touch it.
func TestPauseSetsCairnAwaiting(t *testing.T) {
	tests := []struct {
		name      string
		onFailure model.OnFailure
		fails     int // runs of exec/flaky that fail
		answer    func(t *testing.T, env *testsuite.TestWorkflowEnvironment)
		want      []string
	}{
		{name: "retry", onFailure: model.OnFailurePause, fails: 1, want: []string{AwaitingDecision, ""},
			answer: func(t *testing.T, env *testsuite.TestWorkflowEnvironment) {
				sendDecision(t, env, "", model.DecisionRetry)
			}},
		{name: "abort", onFailure: model.OnFailurePause, fails: -1, want: []string{AwaitingDecision, ""},
			answer: func(t *testing.T, env *testsuite.TestWorkflowEnvironment) {
				sendDecision(t, env, "", model.DecisionAbort)
			}},
		{name: "cancelled while paused", onFailure: model.OnFailurePause, fails: -1, want: []string{AwaitingDecision, ""},
			answer: func(_ *testing.T, env *testsuite.TestWorkflowEnvironment) { env.CancelWorkflow() }},
		{name: "paused run without failure", onFailure: model.OnFailurePause},
		{name: "failure rolled back", onFailure: model.OnFailureRollback, fails: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, "exec/first"), unit(1, "exec/flaky", 0), unit(2, "exec/after", 1))
			if tt.fails != 0 {
				f.failures["exec/flaky"] = tt.fails
			}
			env := newEnv(t, f)
			u := recordUpserts(env)
			var during []string
			var paused model.ProgressPage
			if tt.answer != nil {
				env.RegisterDelayedCallback(func() {
					paused = queryProgress(t, env)
					during = u.awaited()
					tt.answer(t, env)
				}, time.Minute)
			}
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(tt.onFailure, 10))
			require.True(t, env.IsWorkflowCompleted())
			if tt.answer != nil {
				assert.Equal(t, model.ExecWaiting, paused.Status)
				assert.Equal(t, AwaitingDecision, paused.Awaiting)
				assert.Equal(t, []string{AwaitingDecision}, during, "set while paused")
			}
			assert.Equal(t, tt.want, u.awaited())
			assert.Empty(t, queryProgress(t, env).Awaiting, "awaits nothing once ended")
		})
	}
}

// TestShardPauseSetsCairnAwaitingOnTheParent: a step of the second shard
// pauses in its child workflow; the child sets CairnAwaiting and tells the
// parent, which sets its own and answers the progress query as awaiting a
// decision; the decision, sent to the child, unsets both.
func TestShardPauseSetsCairnAwaitingOnTheParent(t *testing.T) {
	f := newFake()
	f.plan = contract.PreparedPlan{Steps: 4, Shards: []contract.Shard{
		{Index: 0, First: 0, Units: 2, Steps: 2}, {Index: 1, First: 2, Units: 2, Steps: 2},
	}}
	f.shards = map[int][]contract.Unit{
		0: {unit(0, "exec/a"), unit(1, "exec/b", 0)},
		1: {unit(2, "exec/c", 1), unit(3, "exec/d")},
	}
	f.failures["exec/d"] = 1
	env := newEnv(t, f)
	u := recordUpserts(env)
	var during []string
	var paused model.ProgressPage
	env.RegisterDelayedCallback(func() {
		paused = queryProgress(t, env)
		during = u.awaited()
		sendDecision(t, env, paused.Shard.WorkflowID, model.DecisionRetry)
	}, time.Minute)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	require.NotNil(t, paused.Shard)
	assert.Equal(t, "stack-s1-shard-1", paused.Shard.WorkflowID)
	assert.Equal(t, model.ExecWaiting, paused.Status, "the parent knows its shard waits")
	assert.Equal(t, AwaitingDecision, paused.Awaiting)
	assert.Equal(t, []string{AwaitingDecision, AwaitingDecision}, during, "the child and the parent are marked")
	assert.Equal(t, []string{AwaitingDecision, AwaitingDecision, "", ""}, u.awaited())
	assert.Equal(t, 2, f.runs["exec/d"], "the retried step ran again")
	assert.Empty(t, queryProgress(t, env).Awaiting)
}

// TestPauseBegunUnderAnOlderBuildKeepsItsHistory: an execution whose
// pause was recorded without CairnAwaiting (GetVersion answers the default
// version on replay) upserts nothing, so its history still replays.
func TestPauseBegunUnderAnOlderBuildKeepsItsHistory(t *testing.T) {
	f := newFake(unit(0, "exec/first"), unit(1, "exec/flaky", 0))
	f.failures["exec/flaky"] = 1
	env := newEnv(t, f)
	u := recordUpserts(env)
	env.OnGetVersion(awaitingChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	var paused model.ProgressPage
	env.RegisterDelayedCallback(func() {
		paused = queryProgress(t, env)
		sendDecision(t, env, "", model.DecisionRetry)
	}, time.Minute)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, model.ExecWaiting, paused.Status, "the progress query still tells")
	assert.Empty(t, u.awaited())
}
