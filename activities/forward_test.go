package activities

import (
	"context"

	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// AllSteps loads an execution's prepared steps for this package's tests
// (prepare.AllSteps).
func AllSteps(ctx context.Context, st store.Store, execID string) ([]*planner.StoredStep, error) {
	return prepare.AllSteps(ctx, st, execID)
}
