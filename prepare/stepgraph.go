package prepare

import (
	"context"

	"github.com/cairn-io/cairn/model"
)

// StepGraph lists an execution's steps in package order, each with the
// steps it waits for, from the step index Persist kept (the plan the
// executor runs, not a second reading of the package). An execution
// prepared before the index carried dependencies lists its steps without
// them. Cost: one store read and decode of the index (about 100 bytes a
// step).
func StepGraph(ctx context.Context, st PlanReader, execID string) ([]model.StepDeps, error) {
	entries, err := StepIndex(ctx, st, execID)
	if err != nil {
		return nil, err
	}
	out := make([]model.StepDeps, len(entries))
	for i, e := range entries {
		deps := e.Deps
		if deps == nil {
			deps = []string{}
		}
		out[i] = model.StepDeps{ID: e.ID, Kind: e.Kind, Node: e.Node, DependsOn: deps}
	}
	return out, nil
}
