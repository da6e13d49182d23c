package dag

import "slices"

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

// LayerIndexes is Layers with each vertex given by its insertion number
// (0 for the first vertex added), for callers that keep data in slices
// parallel to the vertices.
func (g *Graph) LayerIndexes() ([][]int, error) { return g.layerIndexes() }

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

func (g *Graph) layerIndexes() ([][]int, error) {
	n := len(g.ids)
	waiting := make([]int, n) // dependencies not yet placed
	var current []int
	for v := range n {
		waiting[v] = len(g.deps[v])
		if waiting[v] == 0 {
			current = append(current, v)
		}
	}
	var layers [][]int
	placed := 0
	for len(current) > 0 {
		layers = append(layers, current)
		placed += len(current)
		var next []int
		for _, v := range current {
			for _, w := range g.rdeps[v] {
				waiting[w]--
				if waiting[w] == 0 {
					next = append(next, w)
				}
			}
		}
		slices.Sort(next)
		current = next
	}
	if placed != n {
		return nil, &CycleError{Cycles: g.Cycles()}
	}
	return layers, nil
}
