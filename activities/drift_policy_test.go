package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// TestDriftRepairHeldByTheStacksPolicy: a stack whose drift checks repair
// has its repair held while an approval policy wants every apply
// approved, and not otherwise.
func TestDriftRepairHeldByTheStacksPolicy(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	stack := &model.Stack{Name: "web"}
	require.NoError(t, st.CreateStack(ctx, stack))
	require.NoError(t, st.PutDriftSettings(ctx, stack.ID, true, false))
	acts := activities.New(activities.Deps{Store: st})

	got, err := acts.LoadDriftTarget(ctx, contract.LoadDriftTargetInput{StackID: stack.ID})
	require.NoError(t, err)
	assert.True(t, got.Repair)
	assert.Empty(t, got.RepairHeld, "no policy holds the repair")

	require.NoError(t, st.PutApprovalPolicy(ctx, model.ScopeStack, stack.ID, model.ApprovalPolicy{Required: 2}))
	got, err = acts.LoadDriftTarget(ctx, contract.LoadDriftTargetInput{StackID: stack.ID})
	require.NoError(t, err)
	assert.Contains(t, got.RepairHeld, "requires 2 approval(s)")
}
