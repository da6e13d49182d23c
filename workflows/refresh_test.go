package workflows

import (
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// subscribed is a single-step unit of step that subscribes to steps of
// other units, given as unit index → step id.
func subscribed(i int, step string, from map[int]string, deps ...int) contract.Unit {
	u := unit(i, step, deps...)
	sub := contract.Subscription{Step: step}
	for _, d := range deps {
		if id, ok := from[d]; ok {
			sub.From = append(sub.From, contract.StepRef{Unit: d, Step: id})
		}
	}
	u.Subscriptions = []contract.Subscription{sub}
	return u
}

// refreshUnits: conf (changes) and unit (unchanged) are sources;
// restart subscribes to both, reload to unit only, and after only
// depends on conf.
func refreshUnits() []contract.Unit {
	conf, unitFile := unit(0, "file/conf"), unit(1, "file/unit")
	conf.Sources, unitFile.Sources = []string{"file/conf"}, []string{"file/unit"}
	return []contract.Unit{
		conf, unitFile,
		subscribed(2, "exec/restart", map[int]string{0: "file/conf", 1: "file/unit"}, 0, 1),
		subscribed(3, "exec/reload", map[int]string{1: "file/unit"}, 1),
		unit(4, "exec/after", 0),
	}
}

// The executor names a unit's step refreshed exactly when a step it
// subscribes to in another unit changed, from the results it keeps, and
// the report counts the refreshed steps.
func TestExecutorPassesRefreshFromChangedSources(t *testing.T) {
	f := newFake(refreshUnits()...)
	f.unchanged["file/unit"] = true
	f.unchanged["exec/reload"] = true
	f.unchanged["exec/after"] = true
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	require.NoError(t, env.GetWorkflowError())
	var res ApplyResult
	require.NoError(t, env.GetWorkflowResult(&res))

	assert.Equal(t, []string{"exec/restart"}, f.refreshIn["exec/restart"], "one changed source refreshes")
	assert.Empty(t, f.refreshIn["exec/reload"], "an unchanged source refreshes nothing")
	assert.Empty(t, f.refreshIn["exec/after"], "a plain dependency refreshes nothing")
	assert.Equal(t, 1, res.Report.Refreshed)
	assert.Equal(t, 1, res.Report.Created)
	assert.Equal(t, 1, res.Report.Updated, "the refreshed exec ran")
}

// A failed source refreshes nothing (its subscriber never runs); a
// changed source still refreshes its own subscribers.
func TestExecutorFailedSourceRefreshesNothing(t *testing.T) {
	f := newFake(refreshUnits()...)
	f.failures["file/conf"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureContinue, 10))
	require.Error(t, env.GetWorkflowError())
	assert.Equal(t, 0, f.runs["exec/restart"])
	assert.Equal(t, []string{"exec/reload"}, f.refreshIn["exec/reload"], "file/unit was created")
	assert.Empty(t, f.refreshIn["exec/after"])
}

// In a dry-run a source that would change marks its subscribers, and the
// plan summary counts them.
func TestDryRunMarksRefreshedSteps(t *testing.T) {
	f := newFake(refreshUnits()...)
	f.unchanged["file/unit"] = true
	env := newEnv(t, f)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testDryRunID})
	env.ExecuteWorkflow(DryRunWorkflow, DryRunInput{Settings: Settings{ExecutionID: testDryRunID}, StackID: "s1", SnapshotHash: "h"})
	require.NoError(t, env.GetWorkflowError())
	var res DryRunResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, []string{"exec/restart"}, f.refreshIn["exec/restart"])
	assert.Empty(t, f.refreshIn["exec/reload"])
	assert.Equal(t, 1, res.Summary.Refresh)
	require.Len(t, f.plans, 1)
	assert.Equal(t, 1, f.plans[0].Summary.Refresh)
}

// A source in an earlier shard refreshes its subscriber in a later one:
// the shard reports the sources that changed and the next shard's
// executor takes them in.
func TestShardedPlanPassesRefreshAcrossShards(t *testing.T) {
	units := refreshUnits()
	f := newFake()
	f.unchanged["file/unit"] = true
	f.plan = contract.PreparedPlan{Steps: 5, Shards: []contract.Shard{
		{Index: 0, First: 0, Units: 2, Steps: 2}, {Index: 1, First: 2, Units: 3, Steps: 3},
	}}
	f.shards = map[int][]contract.Unit{0: units[:2], 1: units[2:]}
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	require.NoError(t, env.GetWorkflowError())
	var res ApplyResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, []string{"exec/restart"}, f.refreshIn["exec/restart"])
	assert.Empty(t, f.refreshIn["exec/reload"])
	assert.Equal(t, 1, res.Report.Refreshed)
}
