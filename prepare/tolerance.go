package prepare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// tolerances reads each group task's fault_tolerance against the number of
// nodes its steps run on; keys are group ids, with their type's prefix
// when several types run.
func tolerances(types []expandedType, multi bool) map[string]int {
	out := map[string]int{}
	for _, et := range types {
		nodes := map[string]map[string]bool{}
		for _, s := range et.Steps {
			if s.Group == "" {
				continue
			}
			if nodes[s.Group] == nil {
				nodes[s.Group] = map[string]bool{}
			}
			nodes[s.Group][nodeKey(s.Node)] = true
		}
		for _, t := range et.Graph.Tasks {
			if t.Type != model.TaskGroup || t.FaultTolerance == "" {
				continue
			}
			n, err := FaultTolerance(t.FaultTolerance, len(nodes[t.ID]))
			if err != nil {
				continue // validation reports it; no tolerance then
			}
			key := t.ID
			if multi {
				key = et.Type + "/" + t.ID
			}
			out[key] = n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// FaultTolerance reads a group's fault_tolerance as Fuel does: a count of
// nodes ("2"), a negative count meaning all of them but that many ("-1"),
// or a percentage of them, rounded down ("30%"). The result is at least 0
// and at most nodes.
func FaultTolerance(spec string, nodes int) (int, error) {
	s := strings.TrimSpace(spec)
	var n int
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.Atoi(strings.TrimSpace(pct))
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("fault_tolerance %q: want a count, a negative count or a percentage from 0%% to 100%%", spec)
		}
		n = nodes * p / 100
	} else {
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("fault_tolerance %q: want a count, a negative count or a percentage", spec)
		}
		n = v
		if v < 0 {
			n = nodes + v
		}
	}
	return min(max(n, 0), nodes), nil
}
