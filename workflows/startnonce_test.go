package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
)

// TestChildOfAForeignWorkflowIsRefused: an apply started as the child of
// a workflow that is not one of its stack's executions (anyone reaching
// Temporal may start one) runs nothing, and is refused as a start
// without a nonce.
func TestChildOfAForeignWorkflowIsRefused(t *testing.T) {
	f := newFake(contract.Unit{Index: 0, Steps: []string{"a"}})
	env := newEnv(t, f)
	env.RegisterWorkflow(ApplyWorkflow)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: StackWorkflowID("s1")})
		return workflow.ExecuteChildWorkflow(cctx, ApplyWorkflow, applyInput("", 1)).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "Foreign"})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "foreign-1"})
	env.ExecuteWorkflow("Foreign")
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, contract.StartNotIssuedType, app.Type(), "%v", err)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Empty(t, f.runs, "a refused child runs nothing")
	require.Empty(t, f.order, "a refused child runs nothing")
}
