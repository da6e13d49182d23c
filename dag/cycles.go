package dag

import (
	"slices"
	"strings"
)

// CycleError reports that a graph is not acyclic. Each cycle lists its
// members in dependency order: every member depends on the next and the
// last depends on the first.
type CycleError struct {
	Cycles [][]string
}

func (e *CycleError) Error() string {
	var b strings.Builder
	if len(e.Cycles) == 1 {
		b.WriteString("dependency cycle: ")
	} else {
		b.WriteString("dependency cycles: ")
	}
	for i, c := range e.Cycles {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(FormatCycle(c))
	}
	return b.String()
}

// FormatCycle renders a cycle as "a -> b -> c -> a".
func FormatCycle(cycle []string) string {
	if len(cycle) == 0 {
		return ""
	}
	return strings.Join(cycle, " -> ") + " -> " + cycle[0]
}

// Cycles returns elementary cycles that together cover every vertex lying on
// a cycle, or nil for an acyclic graph. Each strongly connected component
// (Tarjan) is covered by one or more short cycles; each cycle is in
// dependency order (every member depends on the next, the last on the
// first) and starts at its earliest-inserted member. Cycles are ordered by
// component, components by their earliest-inserted member.
func (g *Graph) Cycles() [][]string {
	comps := g.cyclicComponents()
	if len(comps) == 0 {
		return nil
	}
	n := len(g.ids)
	compOf := make([]int, n)
	for i := range compOf {
		compOf[i] = -1
	}
	for c, members := range comps {
		for _, v := range members {
			compOf[v] = c
		}
	}
	s := &cycleScratch{
		fdist: make([]int, n), fprev: make([]int, n),
		rdist: make([]int, n), rnext: make([]int, n),
		pos: make([]int, n), covered: make([]bool, n),
	}
	for i := range s.pos {
		s.pos[i] = -1
	}
	var out [][]string
	for c, members := range comps {
		for _, cyc := range g.coverComponent(c, members, compOf, s) {
			out = append(out, g.names(cyc))
		}
	}
	return out
}

type cycleScratch struct {
	fdist, fprev []int // forward BFS from the root: distance, predecessor
	rdist, rnext []int // reverse BFS to the root: distance, next hop
	pos          []int // position of a vertex in the walk being shortened
	covered      []bool
	queue        []int
}

// coverComponent finds short elementary cycles through the component's
// members until every member is on one. Each cycle goes through the
// earliest member r; the uncovered member farthest from r goes first, so a
// long ring or chain is covered by one cycle rather than many overlapping
// ones.
func (g *Graph) coverComponent(c int, members []int, compOf []int, s *cycleScratch) [][]int {
	r := members[0]
	if len(members) == 1 {
		return [][]int{{r}} // a self edge
	}
	g.bfs(r, c, members, compOf, g.deps, s.fdist, s.fprev, s)
	g.bfs(r, c, members, compOf, g.rdeps, s.rdist, s.rnext, s)

	var cycles [][]int
	order := slices.Clone(members)
	slices.SortStableFunc(order, func(a, b int) int { return s.fdist[b] - s.fdist[a] })
	for _, v := range order {
		if s.covered[v] {
			continue
		}
		if v == r { // shortening removed r from every walk: its own cycle
			cycles = append(cycles, g.cycleThroughRoot(r, c, compOf, s))
			continue
		}
		// Closed walk v → … → r → … → v, shortened to an elementary cycle
		// that still passes through v.
		walk := []int{}
		for u := v; u != r; u = s.rnext[u] {
			walk = append(walk, u)
		}
		walk = append(walk, r)
		tail := []int{}
		for u := s.fprev[v]; u != r; u = s.fprev[u] {
			tail = append(tail, u)
		}
		slices.Reverse(tail)
		walk = append(walk, tail...)
		cyc := walk[:0:0]
		for _, u := range walk {
			if p := s.pos[u]; p >= 0 {
				for _, x := range cyc[p+1:] {
					s.pos[x] = -1
				}
				cyc = cyc[:p+1]
				continue
			}
			s.pos[u] = len(cyc)
			cyc = append(cyc, u)
		}
		for _, u := range cyc {
			s.pos[u] = -1
			s.covered[u] = true
		}
		cycles = append(cycles, cyc)
	}
	for i, cyc := range cycles {
		cycles[i] = rotateToMin(cyc)
	}
	return cycles
}

// cycleThroughRoot is r's self edge, or r followed by its nearest way back.
func (g *Graph) cycleThroughRoot(r, c int, compOf []int, s *cycleScratch) []int {
	if slices.Contains(g.deps[r], r) {
		return []int{r}
	}
	best := -1
	for _, d := range g.deps[r] {
		if compOf[d] == c && (best < 0 || s.rdist[d] < s.rdist[best]) {
			best = d
		}
	}
	cyc := []int{r}
	for v := best; v != r; v = s.rnext[v] {
		cyc = append(cyc, v)
	}
	return cyc
}

// bfs explores the component from root along adj, filling dist and hop
// (the vertex each one was reached from).
func (g *Graph) bfs(root, c int, members, compOf []int, adj [][]int, dist, hop []int, s *cycleScratch) {
	for _, v := range members {
		dist[v] = -1
	}
	dist[root] = 0
	q := append(s.queue[:0], root)
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, w := range adj[v] {
			if compOf[w] != c || dist[w] >= 0 {
				continue
			}
			dist[w] = dist[v] + 1
			hop[w] = v
			q = append(q, w)
		}
	}
	s.queue = q[:0]
}

func rotateToMin(cyc []int) []int {
	m := 0
	for i, v := range cyc {
		if v < cyc[m] {
			m = i
		}
	}
	if m == 0 {
		return cyc
	}
	out := make([]int, 0, len(cyc))
	out = append(out, cyc[m:]...)
	return append(out, cyc[:m]...)
}

// cyclicComponents returns the strongly connected components that hold a
// cycle (two or more members, or one with a self edge), each sorted by
// insertion order, ordered by their first member. Tarjan's algorithm,
// iterative so deep chains cannot overflow the stack.
func (g *Graph) cyclicComponents() [][]int {
	n := len(g.ids)
	index := make([]int, n) // 0 = unvisited, else visit number + 1
	low := make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	type frame struct{ v, next int }
	var calls []frame
	counter := 0
	var comps [][]int
	for root := range n {
		if index[root] != 0 {
			continue
		}
		counter++
		index[root], low[root] = counter, counter
		stack = append(stack, root)
		onStack[root] = true
		calls = append(calls, frame{root, 0})
		for len(calls) > 0 {
			fr := &calls[len(calls)-1]
			v := fr.v
			if fr.next < len(g.deps[v]) {
				w := g.deps[v][fr.next]
				fr.next++
				if index[w] == 0 {
					counter++
					index[w], low[w] = counter, counter
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			if low[v] == index[v] {
				k := len(stack) - 1
				for stack[k] != v {
					k--
				}
				comp := slices.Clone(stack[k:])
				for _, w := range comp {
					onStack[w] = false
				}
				stack = stack[:k]
				if len(comp) > 1 || slices.Contains(g.deps[v], v) {
					slices.Sort(comp)
					comps = append(comps, comp)
				}
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				if low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	slices.SortFunc(comps, func(a, b []int) int { return a[0] - b[0] })
	return comps
}
