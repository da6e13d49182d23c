package main

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// allSteps is every step state of a finished execution: the execution's
// own list when it holds them all, else the pages of GET
// /v1/executions/{id}/steps (the execution's answer is bounded; at a
// hundred nodes fuel-library's graph has more steps than fit).
func allSteps(ctx context.Context, e *env, ex *model.Execution) ([]model.StepProgress, error) {
	if ex.Progress != nil && ex.Progress.Total <= len(ex.Steps) {
		return ex.Steps, nil
	}
	var out []model.StepProgress
	for {
		page, err := e.api.Steps(ctx, ex.ID, len(out), 5000)
		if err != nil {
			return nil, fmt.Errorf("steps of %s: %w", ex.ID, err)
		}
		out = append(out, page.Steps...)
		if len(page.Steps) == 0 || len(out) >= page.Entries {
			return out, nil
		}
	}
}
