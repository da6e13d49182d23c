package prepare

import (
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// LimitSteps keeps of steps, in their order, those whose resource is
// named in only (planner.RecordKey: "kind/name@node") and every step they
// depend on, transitively (Deps and AnyOf members), so that what a kept
// step reads of another is there. steps is not changed. Cost:
// O(steps + edges).
func LimitSteps(steps []*model.Step, only []string) []*model.Step {
	want := make(map[string]bool, len(only))
	for _, k := range only {
		want[k] = true
	}
	byID := make(map[string]*model.Step, len(steps))
	var todo []string
	for _, s := range steps {
		byID[s.ID] = s
		if want[planner.RecordKey(s.Kind, s.Name, s.Node)] {
			todo = append(todo, s.ID)
		}
	}
	keep := map[string]bool{}
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		s, ok := byID[id]
		if !ok || keep[id] {
			continue
		}
		keep[id] = true
		todo = append(todo, s.Deps...)
		for _, g := range s.AnyOf {
			todo = append(todo, g...)
		}
	}
	out := make([]*model.Step, 0, len(keep))
	for _, s := range steps {
		if keep[s.ID] {
			out = append(out, s)
		}
	}
	return out
}
