package activities

import (
	"context"

	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// applyBatches makes, before the wave's steps apply one by one, the
// changes of the kinds that batch them (a unit's packages in one apt-get
// transaction, see providers.Batcher). Their before-states are stored
// already; each step's own apply then finds its change made and reports
// it, or makes it itself (and reports its own failure) when the batch
// failed.
func (a *Activities) applyBatches(ctx context.Context, wave []*stepRun) {
	if liveness.Stopping(ctx) {
		return
	}
	var reqs []providers.Request
	for _, r := range wave {
		if r.done || r.step.Meta.Noop {
			continue
		}
		if r.plan.Action != model.ActionCreate && r.plan.Action != model.ActionUpdate || !a.d.Registry.Batches(r.req.Kind) {
			continue
		}
		req := r.req
		req.Noop = false
		reqs = append(reqs, req)
	}
	if len(reqs) < 2 {
		return
	}
	if err := a.d.Registry.ApplyBatches(ctx, reqs); err != nil {
		a.log.Info("a batched change failed: each step makes its own", "error", err)
	}
}
