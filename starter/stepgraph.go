package starter

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// ErrNoGraph says an execution's steps are not (or no longer) known: it
// has not prepared its plan yet, or its step data was pruned.
var ErrNoGraph = errors.New("the execution's step graph is not available")

// Graph lists an execution's steps with the steps each waits for, from the
// plan its Prepare activity kept in the store. It costs a describe, one
// progress query (for the execution's store id, which survives a reset of
// the run) and one store read.
func (s *Starter) Graph(ctx context.Context, id string) ([]model.StepDeps, error) {
	if s.cfg.Store == nil {
		return nil, fmt.Errorf("%w: the starter has no store", ErrNoGraph)
	}
	wfID, _, info, err := s.describeOurs(ctx, id)
	if err != nil {
		return nil, err
	}
	p, err := s.progress(ctx, wfID, info.GetExecution().GetRunId(), 0, 1)
	if err != nil {
		return nil, err
	}
	steps, err := prepare.StepGraph(ctx, s.cfg.Store, p.ExecutionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNoGraph, id)
	}
	return steps, err
}
