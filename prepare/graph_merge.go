package prepare

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Merge merges a cluster's graphs of a type from its layers: its release,
// itself, then its plugins in the cluster's order; only limits the layers
// (nil: every one). found is false when none of them has a graph of the
// type. A full merge is validated against the catalogue; a partial one
// (Fuel's download of release + cluster, or of a cluster's plugins) may
// refer to tasks of the layers left out, so it is not. Graphs that do not
// merge or validate are a *Problems; store failures are returned as they
// are. Cost: one store read per layer, one merge (counted).
func (p *Preparer) Merge(ctx context.Context, c *model.Cluster, typ string, only []model.Layer) (*model.Graph, bool, error) {
	var layers []graphs.LayerGraph
	for _, o := range c.GraphOwners() {
		if only != nil && !slices.Contains(only, o.Layer) {
			continue
		}
		sg, err := p.st.GetGraph(ctx, o.Layer, o.ID, typ)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		layers = append(layers, graphs.LayerGraph{Layer: o.Layer, Owner: o.ID, Graph: sg.Graph})
	}
	if len(layers) == 0 {
		return nil, false, nil
	}
	p.merges.Add(1)
	merged, err := graphs.Merge(typ, layers...)
	if err != nil {
		ds, ok := graphDetails(err, "")
		if !ok {
			ds = []model.ErrorDetail{{Message: err.Error()}}
		}
		return nil, true, &Problems{Message: fmt.Sprintf("graphs of type %q do not merge", typ), Details: ds}
	}
	if only != nil {
		return merged, true, nil
	}
	if errs := graphs.ValidateGraph(p.cat, merged); len(errs) > 0 {
		ds, _ := graphDetails(errs, "")
		return nil, true, &Problems{Message: fmt.Sprintf("the merged graph of type %q is invalid", typ), Details: ds}
	}
	return merged, true, nil
}
