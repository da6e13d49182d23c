package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// CheckPlan says whether an approved plan still holds (see
// contract.CheckPlanInput): the stack's last execution against the one
// the plan was made after, and, with in.Now, every step of the plan made
// again against the approved plan's. It reads both plans from the store
// (cost: one read per step of each) and changes nothing, so a retry is
// harmless.
func (a *Activities) CheckPlan(ctx context.Context, in contract.CheckPlanInput) (*contract.CheckPlanResult, error) {
	st, err := a.d.Store.GetStack(ctx, in.StackID)
	if notFound(err) {
		return nil, configError("stack " + in.StackID + " no longer exists")
	}
	if err != nil {
		return nil, fmt.Errorf("read stack %s: %w", in.StackID, err)
	}
	res := &contract.CheckPlanResult{Base: st.LastExecutionID}
	if st.LastExecutionID != in.Base {
		res.MovedBy = st.LastExecutionID
		if res.MovedBy == "" {
			res.MovedBy = "(its record was reset)"
		}
	}
	if in.Now == "" {
		return res, nil
	}
	planned, err := ReadPlan(ctx, a.d.Store, in.Planned)
	if err != nil {
		return nil, fmt.Errorf("read the approved plan: %w", err)
	}
	now, err := ReadPlan(ctx, a.d.Store, in.Now)
	if err != nil {
		return nil, fmt.Errorf("read the plan made again: %w", err)
	}
	for _, m := range planDifferences(planned.Steps, now.Steps) {
		res.MovedCount++
		if len(res.Moved) < contract.MaxMovedSteps {
			res.Moved = append(res.Moved, m)
		}
	}
	return res, nil
}

// planDifferences names each step whose action, changes or before and
// after values differ between two plans of one package, in the order of
// the first plan, then the steps only the second has.
func planDifferences(planned, now []model.PlanStep) []string {
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
