package workflows

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

func TestShardedPlanRunsEveryShard(t *testing.T) {
	// Two shards; a unit of the second depends on one of the first.
	s0 := []contract.Unit{unit(0, "exec/a"), unit(1, "exec/b", 0)}
	s1 := []contract.Unit{unit(2, "exec/c", 1), unit(3, "exec/d")}
	tests := []struct {
		name        string
		fail        string
		onFailure   model.OnFailure
		wantCreated int
		wantComp    []string
		wantRan     []string
	}{
		{"all succeed", "", model.OnFailureRollback, 4, nil, []string{"exec/a", "exec/b", "exec/c", "exec/d"}},
		{"later shard fails and earlier shards are undone", "exec/d", model.OnFailureRollback, 3,
			[]string{"exec/d", "exec/c", "exec/b", "exec/a"}, nil},
		{"continue fails dependents across shards", "exec/b", model.OnFailureContinue, 2, nil, []string{"exec/d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.plan = contract.PreparedPlan{Steps: 4, Shards: []contract.Shard{
				{Index: 0, First: 0, Units: 2, Steps: 2}, {Index: 1, First: 2, Units: 2, Steps: 2},
			}}
			f.shards = map[int][]contract.Unit{0: s0, 1: s1}
			if tt.fail != "" {
				f.failures[tt.fail] = -1
			}
			f.hold["exec/d"] = 20 * time.Millisecond
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(tt.onFailure, 10))
			err := env.GetWorkflowError()
			var r model.Report
			if tt.fail == "" {
				var res ApplyResult
				if err != nil {
					t.Fatal(err)
				}
				_ = env.GetWorkflowResult(&res)
				r = res.Report
			} else {
				r = reportOf(t, err)
			}
			if r.Created != tt.wantCreated {
				t.Fatalf("report %+v, want %d created", r, tt.wantCreated)
			}
			// The failing shard undoes its own steps (in parallel, in any
			// order) before the earlier shard's, which go latest first.
			if !sameSet(f.compensated, tt.wantComp) ||
				len(tt.wantComp) == 4 && (!sameSet(f.compensated[:2], tt.wantComp[:2]) || !slices.Equal(f.compensated[2:], tt.wantComp[2:])) {
				t.Fatalf("compensated %v, want %v", f.compensated, tt.wantComp)
			}
			for _, id := range tt.wantRan {
				if f.runs[id] == 0 {
					t.Errorf("%s did not run", id)
				}
			}
			if tt.onFailure == model.OnFailureContinue && f.runs["exec/c"] != 0 {
				t.Fatal("exec/c ran although its dependency in the first shard failed")
			}
		})
	}
}

// Units in pages are read page by page; a plan of one shard (units too
// large for one payload, few enough for one workflow) runs in the workflow
// itself, several shards in children.
func TestPagedShards(t *testing.T) {
	units := []contract.Unit{unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 1), unit(3, "exec/d"), unit(4, "exec/e", 2)}
	tests := []struct {
		name     string
		shards   []contract.Shard
		byShard  map[int][]contract.Unit
		children bool
	}{
		{"one shard runs here", []contract.Shard{{Index: 0, Units: 5, Steps: 5, Pages: 3}},
			map[int][]contract.Unit{0: units}, false},
		{"two shards run as children", []contract.Shard{{Index: 0, Units: 3, Steps: 3, Pages: 2}, {Index: 1, First: 3, Units: 2, Steps: 2, Pages: 1}},
			map[int][]contract.Unit{0: units[:3], 1: units[3:]}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.plan = contract.PreparedPlan{Steps: 5, Shards: tt.shards}
			f.shards = tt.byShard
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
			require.NoError(t, env.GetWorkflowError())
			var res ApplyResult
			require.NoError(t, env.GetWorkflowResult(&res))
			assert.Equal(t, 5, res.Report.Created)
			assert.ElementsMatch(t, []string{"exec/a", "exec/b", "exec/c", "exec/d", "exec/e"}, f.order)
			v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
			require.NoError(t, err)
			var page model.ProgressPage
			require.NoError(t, v.Get(&page))
			assert.Equal(t, tt.children, page.Shard != nil, "progress answered by shard children")
			if tt.children {
				assert.Equal(t, []int{3, 2}, page.Shard.Entries, "each finished shard's count of entries, for paging without asking it")
			}
			if !tt.children {
				assert.Len(t, page.Steps, 5)
			}
		})
	}
}
