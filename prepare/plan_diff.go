package prepare

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// PlanDifferences names each step whose action, changes or before and
// after values differ between two plans of one package, in the order of
// the first plan, then the steps only the second has.
func PlanDifferences(planned, now []model.PlanStep) []string {
	byID := make(map[string]model.PlanStep, len(now))
	for _, s := range now {
		byID[s.ID] = s
	}
	var out []string
	for _, p := range planned {
		n, ok := byID[p.ID]
		delete(byID, p.ID)
		switch {
		case !ok:
			out = append(out, p.ID+": no longer planned")
		case p.Action != n.Action:
			out = append(out, fmt.Sprintf("%s: planned %s, now %s", p.ID, p.Action, n.Action))
		case !samePlanStep(p, n):
			out = append(out, fmt.Sprintf("%s: %s as planned, but its current state reads differently", p.ID, p.Action))
		}
	}
	for _, n := range now {
		if _, left := byID[n.ID]; left {
			out = append(out, fmt.Sprintf("%s: not in the approved plan, now %s", n.ID, n.Action))
		}
	}
	return out
}

// samePlanStep compares two plan steps as they are shown (redacted and
// fingerprinted alike).
func samePlanStep(a, b model.PlanStep) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
