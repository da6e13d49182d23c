package workflows

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// planChecker answers CheckPlan: the stack's base is "exec-0"; a
// comparison of two plans reports moved, when set.
type planChecker struct {
	moved  []string
	checks []contract.CheckPlanInput
}

func (p *planChecker) CheckPlan(_ context.Context, in contract.CheckPlanInput) (*contract.CheckPlanResult, error) {
	p.checks = append(p.checks, in)
	res := &contract.CheckPlanResult{Base: "exec-0"}
	if in.Now != "" {
		res.Moved, res.MovedCount = p.moved, len(p.moved)
	}
	return res, nil
}

// planEnv is a test environment for a dry-run of stack s1 that may await
// approval and apply its plan: f's activities, checker's CheckPlan, the
// apply workflow; id is the dry-run's workflow id.
func planEnv(t *testing.T, f *fakeActivities, checker *planChecker) (*testsuite.TestWorkflowEnvironment, string) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	id := DryRunWorkflowID("s1", uuid.NewString())
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	f.register(env)
	env.RegisterActivityWithOptions(checker.CheckPlan, activity.RegisterOptions{Name: contract.CheckPlanName})
	env.RegisterWorkflow(ApplyWorkflow)
	return env, id
}

func TestApprovalWorkflow(t *testing.T) {
	type answer struct {
		approve bool
		at      time.Duration
	}
	tests := []struct {
		name       string
		timeout    time.Duration
		answer     *answer
		moved      []string
		want       model.ApprovalStatus
		wantUpdErr string
		applied    bool
	}{
		{name: "approved: the plan is applied under the stack's lock", answer: &answer{true, time.Hour}, want: model.ApprovalApproved, applied: true},
		{name: "rejected: nothing is applied", answer: &answer{false, time.Hour}, want: model.ApprovalRejected},
		{name: "moved: refused, nothing is applied", answer: &answer{true, time.Hour}, moved: []string{"exec/a: planned create, now noop"},
			want: model.ApprovalStale, wantUpdErr: "exec/a: planned create, now noop"},
		{name: "no answer within the timeout: expired", timeout: 48 * time.Hour, want: model.ApprovalExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, "exec/a"), unit(1, "exec/b", 0))
			checker := &planChecker{moved: tt.moved}
			env, id := planEnv(t, f, checker)
			// The approval's status goes into the CairnApproval search
			// attribute, and CairnAwaiting is "approval" while it waits,
			// for lists.
			u := recordUpserts(env)

			var upd model.Approval
			var updErr error
			if tt.answer != nil {
				env.RegisterDelayedCallback(func() {
					var p model.ProgressPage
					v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
					require.NoError(t, err)
					require.NoError(t, v.Get(&p))
					assert.Equal(t, model.ExecWaiting, p.Status)
					assert.Equal(t, AwaitingApproval, p.Awaiting)
					env.UpdateWorkflow(ApprovalUpdate, "u1", &testsuite.TestUpdateCallback{
						OnAccept: func() {},
						OnReject: func(err error) { updErr = err },
						OnComplete: func(res any, err error) {
							updErr = err
							if err == nil {
								upd = res.(model.Approval)
							}
						},
					}, model.ApprovalRequest{Approve: tt.answer.approve, By: "alice", Nonce: "by:alice", Comment: "ok"})
				}, tt.answer.at)
			}
			env.ExecuteWorkflow(DryRunWorkflow, DryRunInput{
				Settings: Settings{ExecutionID: id}, StackID: "s1", SnapshotHash: "h1",
				Approval: &contract.ApprovalSettings{Timeout: tt.timeout},
			})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var res DryRunResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.NotNil(t, res.Approval)
			assert.Equal(t, tt.want, res.Approval.Status)
			assert.Equal(t, "exec-0", res.Approval.Base)
			assert.Equal(t, []string{string(model.ApprovalAwaiting), string(tt.want)}, u.approval)
			assert.Equal(t, []string{AwaitingApproval, ""}, u.awaited())
			if tt.wantUpdErr != "" {
				require.Error(t, updErr)
				assert.Contains(t, updErr.Error(), tt.wantUpdErr)
			} else if tt.answer != nil {
				require.NoError(t, updErr)
				assert.Equal(t, "alice", res.Approval.By)
				assert.Equal(t, tt.want, upd.Status)
			}
			if tt.moved != nil {
				var app *temporal.ApplicationError
				require.ErrorAs(t, updErr, &app)
				assert.Equal(t, contract.PlanMovedType, app.Type())
			}
			if tt.applied {
				require.Len(t, f.records, 1, "the approved apply records the stack once")
				assert.Equal(t, "s1", f.records[0].StackID)
				assert.Equal(t, "h1", f.records[0].SnapshotHash, "the apply uses the planned snapshot")
				assert.Equal(t, upd.ApplyExecutionID, f.records[0].ExecutionID)
				require.NotNil(t, res.Approval.Report)
				assert.Equal(t, 2, res.Approval.Report.Created+res.Approval.Report.Updated+res.Approval.Report.Unchanged)
				last := checker.checks[len(checker.checks)-1]
				assert.Equal(t, contract.CheckPlanInput{StackID: "s1", Base: "exec-0"}, last, "the apply checks the base under the lock")
			} else {
				assert.Empty(t, f.records, "nothing was applied")
			}
		})
	}
}

// TestApprovalTakesWhoDecidedFromTheNonce: an approval whose nonce the
// store does not vouch for (copied from another plan, or made up by
// someone reaching Temporal) is refused and the plan keeps waiting; one it
// vouches for counts under the principal recorded with the nonce, whatever
// name the payload claims.
func TestApprovalTakesWhoDecidedFromTheNonce(t *testing.T) {
	f := newFake(unit(0, "exec/a"))
	env, id := planEnv(t, f, &planChecker{})

	var forgedErr, vouchedErr error
	var after model.Approval
	send := func(name string, req model.ApprovalRequest, errp *error, res *model.Approval) {
		env.UpdateWorkflow(ApprovalUpdate, name, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { *errp = err },
			OnComplete: func(v any, err error) {
				*errp = err
				if err == nil && res != nil {
					*res = v.(model.Approval)
				}
			},
		}, req)
	}
	env.RegisterDelayedCallback(func() {
		send("forged", model.ApprovalRequest{Approve: true, By: "alice", Nonce: "copied-from-another-plan"}, &forgedErr, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		var p model.ProgressPage
		v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
		require.NoError(t, err)
		require.NoError(t, v.Get(&p))
		assert.Equal(t, AwaitingApproval, p.Awaiting, "the refused approval ended the wait")
		send("vouched", model.ApprovalRequest{Approve: true, By: "alice", Nonce: "by:bob", Comment: "ok"}, &vouchedErr, &after)
	}, 2*time.Hour)
	env.ExecuteWorkflow(DryRunWorkflow, DryRunInput{
		Settings: Settings{ExecutionID: id}, StackID: "s1", SnapshotHash: "h1",
		Approval: &contract.ApprovalSettings{Timeout: 48 * time.Hour},
	})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	var app *temporal.ApplicationError
	require.ErrorAs(t, forgedErr, &app, "the forged approval: %v", forgedErr)
	assert.Equal(t, contract.ActNotIssuedType, app.Type())
	require.NoError(t, vouchedErr)
	var res DryRunResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, model.ApprovalApproved, res.Approval.Status)
	assert.Equal(t, "bob", res.Approval.By, "who approved is the nonce's principal, not the payload's")
	assert.Equal(t, "bob", after.By)
	require.Len(t, f.records, 1, "the approved plan was applied once")
}
