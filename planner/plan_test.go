package planner

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// step builds a file step id "file/<name>" (with "@node" when on a node).
func step(name, node string, deps ...string) *StoredStep {
	id := "file/" + name
	if node != "" {
		id += "@" + node
	}
	return &StoredStep{Step: model.Step{ID: id, Kind: "file", Name: name, Node: node, Deps: deps,
		Spec: model.Spec{"path": "/" + name, "content": "x"}}, Base: "file"}
}

func flat(n int) []*StoredStep {
	out := make([]*StoredStep, n)
	for i := range out {
		out[i] = step(fmt.Sprint(i), "")
	}
	return out
}

func groups(n int) []*StoredStep {
	out := make([]*StoredStep, n)
	for i := range out {
		if i%10 == 0 {
			out[i] = step(fmt.Sprint(i), "")
		} else {
			out[i] = step(fmt.Sprint(i), "", fmt.Sprintf("file/%d", i-i%10))
		}
	}
	return out
}

func chain(n int) []*StoredStep {
	out := make([]*StoredStep, n)
	for i := range out {
		if i == 0 {
			out[i] = step("0", "")
		} else {
			out[i] = step(fmt.Sprint(i), "", fmt.Sprintf("file/%d", i-1))
		}
	}
	return out
}

func plan(t *testing.T, steps []*StoredStep, size int) *Plan {
	t.Helper()
	b := NewBuilder(contract.ModeApply)
	for _, s := range steps {
		b.Add(s)
	}
	p, err := b.Plan(size)
	require.NoError(t, err)
	checkPlan(t, p, len(steps))
	return p
}

// checkPlan asserts the plan's contract: every step in exactly one unit,
// a unit's dependencies all lower than itself and outside it, and each
// step after its dependencies in its own unit.
func checkPlan(t *testing.T, p *Plan, n int) {
	t.Helper()
	require.Len(t, p.Members, len(p.Units))
	unitOf := map[string]int{}
	pos := map[string]int{}
	total := 0
	for i, m := range p.Members {
		require.Equal(t, i, p.Units[i].Index)
		require.Equal(t, len(m), p.Units[i].Count)
		require.Equal(t, len(m) > 1, p.Units[i].Batch)
		if len(m) > 1 && (n <= MaxNamedSteps || p.Units[i].Settled != "") {
			require.Len(t, p.Units[i].Steps, len(m))
			for j, s := range m {
				require.Equal(t, s.ID, p.Units[i].Steps[j])
			}
		}
		for j, s := range m {
			_, dup := unitOf[s.ID]
			require.False(t, dup, "%s in two units", s.ID)
			unitOf[s.ID], pos[s.ID] = i, j
			require.Equal(t, i, s.Unit)
			total++
		}
	}
	require.Equal(t, n, total)
	for i, m := range p.Members {
		want := map[int]bool{}
		for _, s := range m {
			for _, d := range Deps(&s.Step) {
				if unitOf[d] == i {
					require.Less(t, pos[d], pos[s.ID], "%s before its dependency %s in unit %d", s.ID, d, i)
					continue
				}
				require.Less(t, unitOf[d], i, "unit %d depends on later unit %d", i, unitOf[d])
				if len(s.AnyOf) == 0 {
					want[unitOf[d]] = true
				}
			}
		}
		for _, d := range p.Units[i].Deps {
			require.True(t, want[d] || len(p.Units[i].AnyOf) > 0, "unit %d lists dependency %d it does not have", i, d)
		}
	}
}

func counts(p *Plan) []int {
	out := make([]int, len(p.Units))
	for i, u := range p.Units {
		out[i] = u.Count
	}
	return out
}

func TestPlanGroupsByShape(t *testing.T) {
	tests := []struct {
		name      string
		steps     []*StoredStep
		size      int
		wantUnits []int
		wantDeps  [][]int
	}{
		{"flat", flat(250), 100, []int{100, 100, 50}, [][]int{nil, nil, nil}},
		{"groups of 10", groups(250), 100, []int{100, 100, 50}, [][]int{nil, nil, nil}},
		{"chain", chain(250), 100, []int{200, 50}, [][]int{nil, {0}}},
		{"one step per unit", chain(3), 1, []int{1, 1, 1}, [][]int{nil, {0}, {1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(t, tt.steps, tt.size)
			require.Equal(t, tt.wantUnits, counts(p))
			for i, u := range p.Units {
				require.Equal(t, tt.wantDeps[i], u.Deps, "unit %d", i)
			}
		})
	}
}

// Groups cut at a unit boundary finish in the unit that holds their root,
// and a hub every step depends on does not pull them all into its unit:
// every unit waits only for the hub's.
func TestPlanKeepsGroupsWholeAroundAHub(t *testing.T) {
	hub := step("dir", "")
	steps := []*StoredStep{hub}
	for i := range 700 {
		s := step(fmt.Sprint(i), "", hub.ID)
		if i%7 != 0 {
			s.Deps = append(s.Deps, fmt.Sprintf("file/%d", i-i%7))
		}
		steps = append(steps, s)
	}
	p := plan(t, steps, 100)
	for i, u := range p.Units[1:] {
		require.Equal(t, []int{0}, u.Deps, "unit %d waits for the hub's unit only", i+1)
	}
	require.LessOrEqual(t, len(p.Units), 8)
}

func TestPlanKeepsStepsApartByNodeGroupAndDelete(t *testing.T) {
	a1, b1 := step("a", "n1"), step("b", "n2")
	c1 := step("c", "n1", a1.ID, b1.ID) // on n1, waits for n2
	d := step("d", "")
	d.Delete = true
	g := step("g", "n1")
	g.Group = "controllers"
	p := plan(t, []*StoredStep{a1, b1, c1, d, g}, 100)
	// a and c share n1's unit only if b's unit came first: it did not
	// (n1's unit opened before n2's), so c opens a new unit.
	require.Equal(t, []int{1, 1, 1, 1, 1}, counts(p))
	require.Equal(t, []int{0, 1}, p.Units[2].Deps)
	require.True(t, p.Units[3].Delete)
	require.Equal(t, "controllers", p.Units[4].Group)
}

func TestPlanRunsStepsAloneByRule(t *testing.T) {
	off := false
	tests := []struct {
		name string
		edit func(s *StoredStep)
	}{
		{"retry", func(s *StoredStep) { s.Meta.Retry = 2 }},
		{"timeout", func(s *StoredStep) { s.Meta.Timeout = "5s" }},
		{"delay", func(s *StoredStep) { s.Meta.Delay = "1s" }},
		{"strategy", func(s *StoredStep) { s.Strategy = 2; s.Task = "t" }},
		{"any of", func(s *StoredStep) { s.AnyOf = [][]string{{"file/0"}} }},
		{"fail_on_error false", func(s *StoredStep) { s.FailOnError = &off }},
		{"large spec", func(s *StoredStep) { s.Spec["content"] = string(make([]byte, maxSharedSpec+1)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := flat(3)
			tt.edit(steps[1])
			p := plan(t, steps, 100)
			require.Equal(t, []int{2, 1}, counts(p), "the edited step runs alone")
			require.Equal(t, steps[1].ID, p.Units[1].Step)
		})
	}
	t.Run("conditions share, noop steps share with noop steps", func(t *testing.T) {
		steps := flat(4)
		steps[1].Condition = `eq .node.name "x"`
		steps[2].Meta.Noop = true
		steps[3].Meta.Noop = true
		p := plan(t, steps, 100)
		require.Equal(t, []int{2, 2}, counts(p))
		require.False(t, p.Units[0].Meta.Noop)
		require.True(t, p.Units[1].Meta.Noop)
	})
}

func TestPlanSummaryNamesTheSteps(t *testing.T) {
	// A unit naming its steps (Steps) summarizes them by the first and last.
	p := plan(t, flat(3), 100)
	require.Equal(t, "apply 3 steps: file/0 … file/2", p.Units[0].Summary)
	require.Equal(t, []string{"file/0", "file/1", "file/2"}, p.Units[0].Steps)
	// A plan too large to name its steps names them in the summary, up
	// to maxSummaryBytes.
	b := NewBuilder(contract.ModeApply)
	for _, s := range flat(MaxNamedSteps + 1) {
		b.Add(s)
	}
	p, err := b.Plan(100)
	require.NoError(t, err)
	require.Nil(t, p.Units[0].Steps)
	require.True(t, strings.HasPrefix(p.Units[0].Summary, "apply 100 steps: file/0, file/1, "), p.Units[0].Summary)
	require.Contains(t, p.Units[0].Summary, "… (+")
	require.LessOrEqual(t, len(p.Units[0].Summary), maxSummaryBytes+40)
	single := plan(t, []*StoredStep{step("x", "n1")}, 100)
	require.Equal(t, "apply file/x@n1", single.Units[0].Summary)
}

func TestPlanRefusesCyclesAndUnknownSteps(t *testing.T) {
	b := NewBuilder(contract.ModeApply)
	b.Add(step("a", "", "file/b"))
	b.Add(step("b", "", "file/a"))
	_, err := b.Plan(0)
	require.ErrorContains(t, err, "cycle")
	b = NewBuilder(contract.ModeApply)
	b.Add(step("a", "", "file/zz"))
	_, err = b.Plan(0)
	require.ErrorContains(t, err, "unknown step file/zz")
}

// Random DAGs over a few nodes and groups always plan into an acyclic
// unit graph whose dependencies point backwards.
func TestPlanRandomDAGs(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 1 + r.IntN(150)
		steps := make([]*StoredStep, n)
		for i := range steps {
			var deps []string
			for j := 0; j < i; j++ {
				if r.IntN(20) == 0 {
					deps = append(deps, steps[j].ID)
				}
			}
			steps[i] = step(fmt.Sprint(i), fmt.Sprintf("n%d", r.IntN(3)), deps...)
			if r.IntN(10) == 0 {
				steps[i].Meta.Retry = 1
			}
		}
		// Shuffle the package order: the planner sorts.
		r.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
		plan(t, steps, 1+r.IntN(20))
	}
}

func TestUnitSize(t *testing.T) {
	dry, apply := contract.ModeDryRun, contract.ModeApply
	tests := []struct {
		name                     string
		asked                    int
		mode                     contract.Mode
		steps, parallelism, want int
	}{
		{"small dry-run", 0, dry, 1000, 10, DefaultUnitSize},
		{"25 rounds of default units", 0, dry, 25000, 10, DefaultUnitSize},
		{"100,000 steps at 10", 0, dry, 100000, 10, 400},
		{"rounded up", 0, dry, 100001, 10, 401},
		{"default parallelism", 0, dry, 100000, 0, 400},
		{"wide parallelism keeps the default", 0, dry, 100000, 100, DefaultUnitSize},
		{"capped", 0, dry, 10000000, 10, MaxAutoUnitSize},
		{"an apply keeps the default", 0, apply, 100000, 10, DefaultUnitSize},
		{"a destroy keeps the default", 0, contract.ModeDestroy, 100000, 10, DefaultUnitSize},
		{"asked", 7, dry, 100000, 10, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, UnitSize(tt.asked, tt.mode, tt.steps, tt.parallelism))
		})
	}
}
