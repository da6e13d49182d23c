package graphe2e

import (
	"context"
	"testing"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
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
		run      starter.GraphRun
		wantPlan *model.Summary
		wantRun  int // report: steps that ran
	}{
		{"dry run", starter.GraphRun{DryRun: true}, &model.Summary{Run: 2}, 0},
		{"noop run", starter.GraphRun{Noop: true}, &model.Summary{Run: 2}, 0},
		{"real run", starter.GraphRun{}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := h.start(tt.run)
			h.await(e.ID)
			done, err := h.starter.Describe(context.Background(), e.ID)
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, done, model.ExecCompleted)
			if tt.wantPlan == nil {
				if done.Plan != nil {
					t.Fatalf("a real run has a plan: %+v", done.Plan)
				}
				if done.Report == nil || done.Report.Updated+done.Report.Created != tt.wantRun {
					t.Fatalf("report = %+v, want %d steps run", done.Report, tt.wantRun)
				}
				return
			}
			if done.Plan == nil || done.Plan.Summary != *tt.wantPlan || len(done.Plan.Steps) != 2 {
				t.Fatalf("plan = %+v, want summary %+v over 2 steps", done.Plan, *tt.wantPlan)
			}
		})
	}
}
