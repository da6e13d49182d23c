package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
)

// TestSettleParamsEmptiesOnlyThePlansOwn: a plan that ends without
// approval empties the parameters it and its checks were given; an
// execution its input names that is neither (another run's) is refused
// and left as it was, whatever the input says.
func TestSettleParamsEmptiesOnlyThePlansOwn(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	acts := activities.New(activities.Deps{Store: st})
	const plan = "dryrun-s1-0f8c7c9e-0000-4000-8000-000000000001"
	secret := []byte(`{"secrets":{"db":"hunter2"}}`)
	for _, id := range []string{plan, plan + ".check-1", "stack-s2.run-9"} {
		require.NoError(t, st.PutStepData(ctx, id, contract.ParamsKey, contract.DataParams, secret))
	}
	params := func(id string) string {
		b, err := st.GetStepData(ctx, id, contract.ParamsKey, contract.DataParams)
		require.NoError(t, err)
		return string(b)
	}
	settle := func(executions ...string) error {
		return runInWorkflow(t, plan, contract.SettleParamsName, acts.SettleParams,
			contract.SettleParamsInput{StackID: "s1", Params: "ref1", Executions: executions})
	}

	err := settle(plan, "stack-s2.run-9")
	require.Error(t, err, "another execution's parameters were emptied")
	assert.Contains(t, err.Error(), "is neither plan")
	assert.Equal(t, string(secret), params("stack-s2.run-9"))
	assert.Equal(t, string(secret), params(plan), "a refused settle emptied something")

	require.NoError(t, settle(plan, plan+".check-1"))
	assert.Equal(t, "{}", params(plan))
	assert.Equal(t, "{}", params(plan+".check-1"))
	assert.Equal(t, string(secret), params("stack-s2.run-9"))
}
