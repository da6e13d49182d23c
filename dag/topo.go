package dag

import "slices"

// LayerIndexes returns the vertices in topological layers (Kahn's
// algorithm), each vertex given by its insertion number (0 for the first
// vertex added), for callers that keep data in slices parallel to the
// vertices. The first layer has no dependencies, and every vertex sits in
// the layer right after its deepest dependency, so all vertices of a layer
// could run at once. Each layer is in insertion order. A graph with a cycle
// yields a *CycleError naming the cycles. Cost: O(V+E) plus sorting each
// layer.
func (g *Graph) LayerIndexes() ([][]int, error) { return g.layerIndexes() }

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
