package prepare_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

func newPlanStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// planStage is a step that changes nothing, on node, waiting for deps.
func planStage(id, node string, deps ...string) *planner.StoredStep {
	return &planner.StoredStep{Step: model.Step{ID: id, Kind: model.TaskStage, Name: id, RecordKind: model.TaskStage, Node: node, Deps: deps}, Base: model.TaskStage}
}

// persistPlan plans steps into units of at most size steps and persists them
// under execID.
func persistPlan(t *testing.T, st store.Store, execID string, size int, steps ...*planner.StoredStep) *planner.Plan {
	t.Helper()
	b := planner.NewBuilder(contract.ModeApply)
	for _, s := range steps {
		b.Add(s)
	}
	p, err := b.Plan(size)
	require.NoError(t, err)
	require.NoError(t, prepare.Persist(context.Background(), st, execID, p.Units, p.Members))
	return p
}

// A graph run of two types keeps one step index for both: the step graph
// lists every step of each type, the barrier closing each type, and the
// next type's steps after that barrier.
func TestStepGraphListsEveryStepWithItsDependencies(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	steps := []*planner.StoredStep{
		planStage("deploy/install@n2", "n2"), planStage("deploy/restart@n2", "n2", "deploy/install@n2"),
		planStage("deploy@master", "", "deploy/install@n2", "deploy/restart@n2"),
		planStage("check/probe@n2", "n2", "deploy@master"), planStage("check/probe@n3", "n3", "deploy@master"),
		planStage("check@master", "", "check/probe@n2", "check/probe@n3"),
	}
	persistPlan(t, st, "e-types", 0, steps...)

	graph, err := prepare.StepGraph(ctx, st, "e-types")
	require.NoError(t, err)
	require.Len(t, graph, len(steps), "every prepared step is in the graph")
	deps := map[string][]string{}
	for i, s := range graph {
		assert.Equal(t, steps[i].ID, s.ID, "package order")
		deps[s.ID] = s.DependsOn
	}
	assert.Equal(t, []string{}, deps["deploy/install@n2"], "no dependencies is an empty list")
	assert.Equal(t, []string{"deploy/install@n2"}, deps["deploy/restart@n2"])
	assert.Equal(t, []string{"deploy@master"}, deps["check/probe@n3"], "the second type waits for the first")
	assert.ElementsMatch(t, []string{"check/probe@n2", "check/probe@n3"}, deps["check@master"])

	_, err = prepare.StepGraph(ctx, st, "e-none")
	assert.ErrorIs(t, err, store.ErrNotFound, "an execution without an index has no graph")
}

// Persist keeps single-step units a record each and batch units one
// record of their steps; AllSteps reads all of them back in package order.
func TestPersistedStepsReadBackInPackageOrder(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	var steps []*planner.StoredStep
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		steps = append(steps, planStage(id, ""))
	}
	p := persistPlan(t, st, "e1", 2, steps...)
	batches := 0
	for _, u := range p.Units {
		if u.Batch {
			batches++
		}
	}
	require.Positive(t, batches, "units: %+v", p.Units)

	all, err := prepare.AllSteps(ctx, st, "e1")
	require.NoError(t, err)
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, ids)
	index, err := prepare.StepIndex(ctx, st, "e1")
	require.NoError(t, err)
	assert.Len(t, index, 5)
}

// ReadPlan assembles the summary and the plan steps the dry-run kept, in
// package order, leaving out steps without a plan step.
func TestReadPlanAssemblesTheStoredPlan(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	persistPlan(t, st, "e1", 0, planStage("a", ""), planStage("b", "", "a"), planStage("c", "", "b"))
	summary, err := json.Marshal(model.Plan{MissingSecrets: []string{"token"}})
	require.NoError(t, err)
	require.NoError(t, st.PutStepData(ctx, "e1", contract.PlanSummaryKey, contract.DataPlanSummary, summary))
	for _, id := range []string{"c", "a"} {
		raw, err := json.Marshal(model.PlanStep{ID: id, Action: model.ActionCreate})
		require.NoError(t, err)
		require.NoError(t, st.PutStepData(ctx, "e1", id, contract.DataPlan, raw))
	}

	plan, err := prepare.ReadPlan(ctx, st, "e1")
	require.NoError(t, err)
	require.Len(t, plan.Steps, 2)
	assert.Equal(t, "a", plan.Steps[0].ID)
	assert.Equal(t, "c", plan.Steps[1].ID)
	assert.Equal(t, []string{"token"}, plan.MissingSecrets)
	assert.Equal(t, []string{}, plan.MissingEnvRefs, "none missing is an empty list")

	_, err = prepare.ReadPlan(ctx, st, "e-none")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// Units beyond the shard size, or beyond one payload, go to the store in
// shards that cover them all in order, each in pages of at most
// contract.MaxUnitsPageBytes; fewer and smaller stay inline.
func TestShardSplitsManyUnits(t *testing.T) {
	ctx := context.Background()
	small := make([]contract.Unit, 5)
	for i := range small {
		small[i] = contract.Unit{Index: i, Count: 2}
	}
	// A fleet's units: each waits for a few hundred others, so 400 of them
	// are several payloads' worth.
	fleet := make([]contract.Unit, 400)
	for i := range fleet {
		fleet[i] = contract.Unit{Index: i, Count: 1, Step: fmt.Sprintf("task@%d", i)}
		for d := range 600 {
			fleet[i].Deps = append(fleet[i].Deps, 100000+d)
		}
	}
	tests := []struct {
		name       string
		units      []contract.Unit
		shardUnits int
		inline     bool
		shards     []int // units per shard
	}{
		{"few and small stay inline", small, 5, true, nil},
		{"more than a shard", small, 2, false, []int{2, 2, 1}},
		{"one shard too large for one payload", fleet, 0, false, []int{400}},
		{"several shards, each paged", fleet, 150, false, []int{150, 150, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newPlanStore(t)
			plan := &contract.PreparedPlan{}
			require.NoError(t, prepare.Shard(ctx, st, "e1", tt.units, tt.shardUnits, plan))
			if tt.inline {
				assert.Equal(t, tt.units, plan.Units)
				assert.Empty(t, plan.Shards)
				return
			}
			assert.Empty(t, plan.Units)
			require.Len(t, plan.Shards, len(tt.shards))
			var got []contract.Unit
			for k, sh := range plan.Shards {
				assert.Equal(t, tt.shards[k], sh.Units)
				assert.Equal(t, len(got), sh.First)
				require.Positive(t, sh.Pages)
				var inShard []contract.Unit
				for p := range sh.Pages {
					raw, err := st.GetStepData(ctx, "e1", contract.ShardPageKey(k, p), contract.DataShard)
					require.NoError(t, err)
					assert.LessOrEqual(t, len(raw), contract.MaxUnitsPageBytes, "page %d of shard %d", p, k)
					var page []contract.Unit
					require.NoError(t, json.Unmarshal(raw, &page))
					inShard = append(inShard, page...)
				}
				assert.Len(t, inShard, sh.Units)
				got = append(got, inShard...)
			}
			assert.Equal(t, tt.units, got)
		})
	}
}

// An agent node gets a grant naming its steps, the steps elsewhere they
// read and the env refs and secrets they read by name; local nodes get
// none.
func TestWriteGrantsForAgentNodes(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	src := planStage("src", "")
	use := planStage("use", "n1", "src")
	use.Spec = model.Spec{"content": `{{ env "REGION" }} {{ secret "token" }}`}
	local := planStage("local", "n2")
	nodes := []model.Node{{ID: "n1", Mode: model.NodeAgent}, {ID: "n2"}}
	units := []contract.Unit{{Index: 0, Step: "src"}, {Index: 1, Step: "use", Node: "n1"}, {Index: 2, Step: "local", Node: "n2"}}
	members := [][]*planner.StoredStep{{src}, {use}, {local}}
	require.NoError(t, prepare.WriteGrants(ctx, st, "e1", "c1", nodes, units, members))

	grants, err := st.ListStepData(ctx, "e1", contract.DataNodeGrant)
	require.NoError(t, err)
	require.Len(t, grants, 1, "only the agent node has a grant")
	var g contract.NodeGrant
	require.NoError(t, json.Unmarshal(grants["n1"], &g))
	assert.Equal(t, "c1", g.Cluster)
	assert.Equal(t, []string{"use"}, g.Steps)
	assert.Equal(t, []string{"src"}, g.Deps)
	assert.Equal(t, []string{"REGION"}, g.EnvRefs)
	assert.Equal(t, []string{"token"}, g.Secrets)
}

// Plan differences name steps whose action or shown values changed, steps
// no longer planned and steps new to the plan.
func TestPlanDifferences(t *testing.T) {
	planned := []model.PlanStep{
		{ID: "a", Action: model.ActionNoop},
		{ID: "b", Action: model.ActionUpdate, Changes: []model.AttrChange{{Path: "content", Old: "x", New: "y"}}},
		{ID: "c", Action: model.ActionCreate},
		{ID: "d", Action: model.ActionNoop},
	}
	now := []model.PlanStep{
		{ID: "a", Action: model.ActionNoop},
		{ID: "b", Action: model.ActionUpdate, Changes: []model.AttrChange{{Path: "content", Old: "z", New: "y"}}},
		{ID: "c", Action: model.ActionNoop},
		{ID: "e", Action: model.ActionCreate},
	}
	assert.Equal(t, []string{
		"b: update as planned, but its current state reads differently",
		"c: planned create, now noop",
		"d: no longer planned",
		"e: not in the approved plan, now create",
	}, prepare.PlanDifferences(planned, now))
	assert.Empty(t, prepare.PlanDifferences(planned, planned))
}
