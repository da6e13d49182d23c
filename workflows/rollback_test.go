package workflows

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// recreating compensates as the fake does and reports steps named
// "exec/recreate*" as objects recreated under a new id.
type recreating struct{ *fakeActivities }

func (r recreating) Compensate(ctx context.Context, in contract.CompensateInput) (*contract.CompensateOutput, error) {
	res, err := r.fakeActivities.Compensate(ctx, in)
	if err != nil {
		return nil, err
	}
	out := &contract.CompensateOutput{CompensateResult: *res}
	for _, s := range res.Steps {
		if strings.HasPrefix(s.StepID, "exec/recreate") && s.Undone {
			if out.Recreated == nil {
				out.Recreated = map[string]string{}
			}
			out.Recreated[s.StepID] = "new-" + s.StepID
		}
	}
	return out, nil
}

func TestRollbackRecordsRecreatedObjects(t *testing.T) {
	tests := []struct {
		name       string
		steps      []string
		wantRecord bool
	}{
		{"a recreated object is recorded", []string{"exec/recreate-a", "exec/b"}, true},
		{"a plain rollback leaves the record alone", []string{"exec/a", "exec/b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(unit(0, tt.steps[0]), unit(1, tt.steps[1], 0), unit(2, "exec/fail", 1))
			f.failures["exec/fail"] = -1
			var s testsuite.WorkflowTestSuite
			s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
			env := s.NewTestWorkflowEnvironment()
			env.SetTestTimeout(30 * time.Second)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: StackWorkflowID("s1")})
			env.RegisterActivityWithOptions(f.Prepare, activity.RegisterOptions{Name: contract.PrepareName})
			env.RegisterActivityWithOptions(f.ApplyStep, activity.RegisterOptions{Name: contract.ApplyStepName})
			env.RegisterActivityWithOptions(recreating{f}.Compensate, activity.RegisterOptions{Name: contract.CompensateName})
			env.RegisterActivityWithOptions(f.WriteStackRecord, activity.RegisterOptions{Name: contract.WriteStackRecordName})
			env.RegisterWorkflow(HookDeliveryWorkflow)
			env.RegisterActivityWithOptions(f.DeliverHooks, activity.RegisterOptions{Name: contract.DeliverHooksName})
			env.RegisterActivityWithOptions(f.WantsHooks, activity.RegisterOptions{Name: contract.WantsHooksName})
			registerAcceptStart(env)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 1))
			err := env.GetWorkflowError()
			r := reportOf(t, err)
			require.True(t, r.RolledBack, "report %+v, want a rollback", r)
			require.True(t, sameSet(f.compensated, []string{tt.steps[0], tt.steps[1], "exec/fail"}), "compensated %v", f.compensated)
			if !tt.wantRecord {
				require.Empty(t, f.records, "records written")
				return
			}
			require.Len(t, f.records, 1, "records written: %+v, want one", f.records)
			rec := f.records[0]
			require.False(t, rec.Changed, "record input %+v, want an unchanged record of s1", rec)
			require.False(t, rec.Destroy, "record input %+v, want an unchanged record of s1", rec)
			require.Equal(t, "s1", rec.StackID, "record input %+v, want an unchanged record of s1", rec)
			require.Equal(t, "stack-s1", rec.ExecutionID, "record input %+v, want an unchanged record of s1", rec)
		})
	}
}
