package activities

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/prepare"
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
	planned, err := prepare.ReadPlan(ctx, a.d.Store, in.Planned)
	if err != nil {
		return nil, fmt.Errorf("read the approved plan: %w", err)
	}
	now, err := prepare.ReadPlan(ctx, a.d.Store, in.Now)
	if err != nil {
		return nil, fmt.Errorf("read the plan made again: %w", err)
	}
	for _, m := range prepare.PlanDifferences(planned.Steps, now.Steps) {
		res.MovedCount++
		if len(res.Moved) < contract.MaxMovedSteps {
			res.Moved = append(res.Moved, m)
		}
	}
	return res, nil
}
