package api

import (
	"context"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// controlPlaneLister is the tests' export Lister over a providers'
// registry, as the server wires it: it lists on the control plane.
type controlPlaneLister struct{ reg *providers.Registry }

func (l controlPlaneLister) List(ctx context.Context, kind string, q model.ListQuery) ([]model.Listed, error) {
	items, err := l.reg.List(ctx, kind, providers.Node{}, providers.ListQuery(q))
	out := make([]model.Listed, len(items))
	for i, it := range items {
		out[i] = model.Listed(it)
	}
	return out, err
}
