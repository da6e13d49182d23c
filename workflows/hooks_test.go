package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/model"
)

func TestExecutionsSendTheirEndToTheStacksHooks(t *testing.T) {
	tests := []struct {
		name   string
		fail   bool
		typ    string
		status model.ExecutionStatus
	}{
		{"completed", false, model.EventExecutionCompleted, model.ExecCompleted},
		{"failed", true, model.EventExecutionFailed, model.ExecFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(unit(0, "exec/a"))
			if tc.fail {
				f.failures["exec/a"] = -1
			}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureStop, 1))
			assert.Equal(t, tc.fail, env.GetWorkflowError() != nil)
			require.Len(t, f.hookEvents, 1, "the delivery child did not run (or was refused)")
			ev := f.hookEvents[0]
			assert.Equal(t, tc.typ, ev.Type)
			assert.Equal(t, string(tc.status), ev.Status)
			assert.Equal(t, "s1", ev.StackID)
			assert.Equal(t, "stack-s1", ev.ExecutionID)
			assert.Equal(t, model.ExecApply, ev.Kind)
			assert.Equal(t, "stack-s1/"+tc.typ, ev.ID)
		})
	}
}

func TestExecutionsOfStacksWithoutHooksStartNoDelivery(t *testing.T) {
	f := newFake(unit(0, "exec/a"))
	f.noHooks = true
	env := newEnv(t, f)
	started := 0
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		if info.WorkflowType.Name == "HookDeliveryWorkflow" {
			started++
		}
	})
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureStop, 1))
	require.NoError(t, env.GetWorkflowError())
	assert.Zero(t, started, "a delivery child started for a stack without hooks")
	assert.Empty(t, f.hookEvents)
}

func TestHookDeliveryRefusesAStartWithoutParent(t *testing.T) {
	f := newFake()
	env := newEnv(t, f)
	ev := model.HookEvent{ID: "x", Type: model.EventDriftDetected, StackID: "s1", ExecutionID: "stack-s1"}
	env.ExecuteWorkflow(HookDeliveryWorkflow, HookDeliveryInput{Event: ev})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), UntrustedInputType)
	assert.Empty(t, f.hookEvents, "a forged delivery reached the hooks")
}
