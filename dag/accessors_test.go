package dag

import "slices"

// Accessors that only tests read: production code walks a Graph through a
// Scheduler or Reverse and never lists it.

// Len is the number of vertices.
func (g *Graph) Len() int { return len(g.ids) }

// EdgeCount is the number of distinct edges.
func (g *Graph) EdgeCount() int { return len(g.edges) }

// Vertices returns every vertex in insertion order.
func (g *Graph) Vertices() []string { return slices.Clone(g.ids) }

// Deps returns the vertices id depends on directly, in edge order; nil for
// an unknown vertex.
func (g *Graph) Deps(id string) []string {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	return g.names(g.deps[i])
}

// Dependents returns the vertices that depend directly on id, in edge order;
// nil for an unknown vertex.
func (g *Graph) Dependents(id string) []string {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	return g.names(g.rdeps[i])
}

// Layers returns the vertices in topological layers (Kahn's algorithm): the
// first layer has no dependencies, and every vertex sits in the layer right
// after its deepest dependency, so all vertices of a layer could run at
// once. Each layer is in vertex insertion order. A graph with a cycle yields
// a *CycleError naming the cycles.
func (g *Graph) Layers() ([][]string, error) {
	layers, err := g.layerIndexes()
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		return nil, nil
	}
	out := make([][]string, len(layers))
	for i, l := range layers {
		out[i] = g.names(l)
	}
	return out, nil
}

// TopoOrder returns every vertex after all of its dependencies: the layers
// of Layers, concatenated.
func (g *Graph) TopoOrder() ([]string, error) {
	layers, err := g.layerIndexes()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(g.ids))
	for _, l := range layers {
		for _, v := range l {
			out = append(out, g.ids[v])
		}
	}
	return out, nil
}

// Len is the number of vertices.
func (s *Scheduler) Len() int { return len(s.state) }

// Finished reports whether every vertex is in a final state.
func (s *Scheduler) Finished() bool { return s.open == 0 }

// Running is the number of vertices handed out and not Done.
func (r *Reverse) Running() int { return r.running }
