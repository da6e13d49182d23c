// Package dag is a small directed acyclic graph over string vertex ids
// (edges, cycle detection, topological layers) and the one Scheduler that
// decides what runs when: the executor's forward run and its compensation
// (Reverse), the planner's order and a unit's in-order walk all use it. It
// is pure (no I/O, no clock, no goroutines) and general; graphs builds
// package and task graphs on top of it.
//
// Files, one concept each: dag.go (the graph), cycles.go, topo.go (layers),
// state.go (a vertex's states), builder.go (dependencies, AnyOf groups,
// caps, tolerance), scheduler.go (the forward run), ready.go (the ready
// set), tolerance.go, reverse.go (compensation order).
//
// An edge Connect(a, b) means "a depends on b": b must finish before a
// starts. Iteration is deterministic: vertices come in insertion order (the
// order of their first Add or Connect), dependencies in the order the edges
// were added, and every layer of LayerIndexes in vertex insertion order.
package dag

// Graph is a directed graph of string vertices. The zero value is not ready
// to use; call New. A Graph is not safe for concurrent mutation.
type Graph struct {
	index map[string]int // id → vertex number (insertion order)
	ids   []string       // vertex number → id
	deps  [][]int        // vertex → vertices it depends on
	rdeps [][]int        // vertex → vertices depending on it
	edges map[uint64]struct{}
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{index: map[string]int{}, edges: map[uint64]struct{}{}}
}

// NewWithCapacity returns an empty graph with room for about n vertices
// and 2n edges, which spares rehashing when building large graphs.
func NewWithCapacity(n int) *Graph {
	return &Graph{
		index: make(map[string]int, n),
		ids:   make([]string, 0, n),
		deps:  make([][]int, 0, n),
		rdeps: make([][]int, 0, n),
		edges: make(map[uint64]struct{}, 2*n),
	}
}

// Add adds a vertex; adding an existing vertex does nothing.
func (g *Graph) Add(id string) { g.vertex(id) }

func (g *Graph) vertex(id string) int {
	if i, ok := g.index[id]; ok {
		return i
	}
	i := len(g.ids)
	g.index[id] = i
	g.ids = append(g.ids, id)
	g.deps = append(g.deps, nil)
	g.rdeps = append(g.rdeps, nil)
	return i
}

// Connect records that from depends on to (to must finish first). Missing
// vertices are added; a repeated edge is recorded once. An edge from a
// vertex to itself is kept and reported as a cycle.
func (g *Graph) Connect(from, to string) { g.AddEdge(from, to) }

// AddEdge is Connect reporting whether the edge is new.
func (g *Graph) AddEdge(from, to string) bool {
	f, t := g.vertex(from), g.vertex(to)
	key := uint64(f)<<32 | uint64(uint32(t))
	if _, ok := g.edges[key]; ok {
		return false
	}
	g.edges[key] = struct{}{}
	g.deps[f] = append(g.deps[f], t)
	g.rdeps[t] = append(g.rdeps[t], f)
	return true
}

// Has reports whether id is a vertex.
func (g *Graph) Has(id string) bool {
	_, ok := g.index[id]
	return ok
}

// HasEdge reports whether from depends directly on to.
func (g *Graph) HasEdge(from, to string) bool {
	f, ok1 := g.index[from]
	t, ok2 := g.index[to]
	if !ok1 || !ok2 {
		return false
	}
	_, ok := g.edges[uint64(f)<<32|uint64(uint32(t))]
	return ok
}

func (g *Graph) names(vs []int) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for k, v := range vs {
		out[k] = g.ids[v]
	}
	return out
}
