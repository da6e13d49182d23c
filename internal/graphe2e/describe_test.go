package graphe2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Describe answers for a finished graph execution as DescribeGraph does:
// a dry run or noop run with its plan, a real run with its report.
func TestDescribeShowsAGraphPlan(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: touch
  type: shell
  roles: [compute]
  parameters: {cmd: "touch touched"}
`)
	tests := []struct {
		name     string
		run      contract.GraphRequest
		wantPlan *model.Summary
		wantRun  int // report: steps that ran
	}{
		{"dry run", contract.GraphRequest{DryRun: true}, &model.Summary{Run: 2}, 0},
		{"noop run", contract.GraphRequest{Noop: true}, &model.Summary{Run: 2}, 0},
		{"real run", contract.GraphRequest{}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := h.start(tt.run)
			h.await(e.ID)
			done, err := h.starter.Describe(context.Background(), e.ID)
			require.NoError(t, err)
			mustStatus(t, done, model.ExecCompleted)
			if tt.wantPlan == nil {
				require.Nil(t, done.Plan, "a real run has a plan")
				require.NotNil(t, done.Report, "report = %+v, want %d steps run", done.Report, tt.wantRun)
				require.Equal(t, tt.wantRun, done.Report.Updated+done.Report.Created, "report = %+v, want %d steps run", done.Report, tt.wantRun)
				return
			}
			require.NotNil(t, done.Plan, "plan = %+v, want summary %+v over 2 steps", done.Plan, *tt.wantPlan)
			require.Equal(t, *tt.wantPlan, done.Plan.Summary, "plan = %+v, want summary %+v over 2 steps", done.Plan, *tt.wantPlan)
			require.Len(t, done.Plan.Steps, 2, "plan = %+v, want summary %+v over 2 steps", done.Plan, *tt.wantPlan)
		})
	}
}
