package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A unit whose steps are all known to be skipped (a Fuel condition decided
// false when the execution was prepared, a task not selected) is settled
// without an activity; its dependents run after it as after any skip.
func TestSettledUnitsRunNoActivity(t *testing.T) {
	settled := func(u contract.Unit, why string) contract.Unit { u.Settled = why; return u }
	batch := contract.Unit{Index: 2, Step: "exec/c1", Count: 2, Batch: true, Steps: []string{"exec/c1", "exec/c2"},
		Kind: "exec", Deps: []int{1}, Settled: "condition is false"}
	units := []contract.Unit{
		unit(0, "exec/a"),
		settled(unit(1, "exec/b", 0), "not selected"),
		batch,
		unit(3, "exec/d", 2),
		settled(unit(4, "exec/e"), "condition is false"),
	}
	f := newFake(units...)
	env := newEnv(t, f)
	var page model.ProgressPage
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	require.NoError(t, env.GetWorkflowError())

	assert.ElementsMatch(t, []string{"exec/a", "exec/d"}, f.order, "only units with a step to run are activities")
	assert.Less(t, f.finishedAt["exec/a"], f.startedAt["exec/d"], "d waits for a through the settled units")
	var res ApplyResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, 2, res.Report.Created)
	assert.Equal(t, 4, res.Report.Skipped, "b, c1, c2 and e are skipped")

	v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
	require.NoError(t, err)
	require.NoError(t, v.Get(&page))
	why := map[string]string{}
	for _, sp := range page.Steps {
		if sp.Status == model.StatusSkipped {
			require.Len(t, sp.Changes, 1, sp.ID)
			why[sp.ID] = sp.Changes[0].New.(string)
		}
	}
	assert.Equal(t, map[string]string{
		"exec/b": "not selected", "exec/c1": "condition is false", "exec/c2": "condition is false", "exec/e": "condition is false",
	}, why)
}
