package workflows

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// paramsSettler records SettleParams calls.
type paramsSettler struct {
	mu    sync.Mutex
	calls []contract.SettleParamsInput
}

func (p *paramsSettler) SettleParams(_ context.Context, in contract.SettleParamsInput) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, in)
	return nil
}

// answerOutcome is what one approval Update got back.
type answerOutcome struct {
	err   error
	state model.Approval
}

// Under a four-eyes policy of two approvers that keeps the author out, the
// plan waits until two distinct principals other than its author approved
// it; the same approver twice counts once; a rejection by anyone allowed
// ends it. Its parameters are settled when it stops waiting: kept for the
// stack once approved, deleted otherwise.
func TestFourEyesApproval(t *testing.T) {
	type ask struct {
		by      string
		approve bool
		claim   string // the name the payload claims, when not by's
	}
	tests := []struct {
		name    string
		asks    []ask
		author  bool // the policy lets the author approve
		want    model.ApprovalStatus
		wantErr []string // per ask: "" or a part of the refusal
		wantN   []int    // per ask: approvals counted after it
		applied bool
	}{
		{
			name:    "two distinct approvers apply it; the author and a repeat do not count",
			asks:    []ask{{"alice", true, ""}, {"bob", true, ""}, {"bob", true, ""}, {"carol", true, ""}},
			want:    model.ApprovalApproved,
			wantErr: []string{ErrAuthorMayNotApprove, "", "", ""},
			wantN:   []int{0, 1, 1, 2},
			applied: true,
		},
		{
			name:    "the author claiming another name in the payload is still the author",
			asks:    []ask{{"alice", true, "mallory"}, {"bob", true, ""}, {"carol", true, "dave"}},
			want:    model.ApprovalApproved,
			wantErr: []string{ErrAuthorMayNotApprove, "", ""},
			wantN:   []int{0, 1, 2},
			applied: true,
		},
		{
			name:    "the author may approve when the policy says so",
			asks:    []ask{{"alice", true, ""}, {"bob", true, ""}},
			author:  true,
			want:    model.ApprovalApproved,
			wantErr: []string{"", ""},
			wantN:   []int{1, 2},
			applied: true,
		},
		{
			name:    "one rejection ends it after an approval",
			asks:    []ask{{"bob", true, ""}, {"carol", false, ""}},
			want:    model.ApprovalRejected,
			wantErr: []string{"", ""},
			wantN:   []int{1, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, "exec/a"))
			checker := &planChecker{}
			settler := &paramsSettler{}
			env, id := planEnv(t, f, checker)
			env.RegisterActivityWithOptions(settler.SettleParams, activity.RegisterOptions{Name: contract.SettleParamsName})

			got := make([]answerOutcome, len(tt.asks))
			for i, a := range tt.asks {
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(ApprovalUpdate, uuid.NewString(), &testsuite.TestUpdateCallback{
						OnAccept: func() {},
						OnReject: func(err error) { got[i].err = err },
						OnComplete: func(res any, err error) {
							got[i].err = err
							if err == nil {
								got[i].state = res.(model.Approval)
							}
						},
					}, model.ApprovalRequest{Approve: a.approve, By: cmp.Or(a.claim, a.by), Nonce: "by:" + a.by, Comment: "ask " + a.by})
				}, time.Duration(i+1)*time.Hour)
			}
			env.ExecuteWorkflow(DryRunWorkflow, DryRunInput{
				Settings: Settings{ExecutionID: id}, StackID: "s1", SnapshotHash: "h1", Params: "ref1",
				Approval: &contract.ApprovalSettings{ApprovalRule: model.ApprovalRule{Required: 2, Author: "alice", AuthorMayApprove: tt.author,
					MayApprove: "principals with approver on stack s1"}, KeepSecrets: true},
			})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var res DryRunResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.NotNil(t, res.Approval)
			assert.Equal(t, tt.want, res.Approval.Status)
			assert.Equal(t, 2, res.Approval.Required)
			assert.Equal(t, "alice", res.Approval.Author)
			assert.Equal(t, "principals with approver on stack s1", res.Approval.MayApprove)
			for i, want := range tt.wantErr {
				if want != "" {
					require.Error(t, got[i].err, "ask %d", i)
					assert.Contains(t, got[i].err.Error(), want)
					continue
				}
				require.NoError(t, got[i].err, "ask %d", i)
				assert.Len(t, got[i].state.Approvals, tt.wantN[i], "approvals after ask %d", i)
			}
			var by []string
			for _, v := range res.Approval.Approvals {
				by = append(by, v.By)
			}
			if !tt.author {
				assert.NotContains(t, by, "alice", "the author was counted")
			}
			for _, a := range tt.asks {
				if a.claim != "" {
					assert.NotContains(t, by, a.claim, "a claimed name was counted")
				}
			}
			assert.Len(t, by, tt.wantN[len(tt.wantN)-1], "approvals counted: %v", by)
			if tt.applied {
				require.Len(t, f.records, 1, "the approved apply records the stack once")
				assert.Equal(t, "h1", f.records[0].SnapshotHash, "the apply uses the planned snapshot")
			} else {
				assert.Empty(t, f.records, "nothing was applied")
			}
			require.Len(t, settler.calls, 1, "the parameters are settled once")
			call := settler.calls[0]
			assert.Equal(t, "ref1", call.Params)
			assert.Equal(t, tt.applied, call.Approved)
			assert.True(t, call.Keep)
			assert.Contains(t, call.Executions, id, "the plan's own copy is emptied when not approved")
		})
	}
}
