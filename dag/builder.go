package dag

import "fmt"

// Outside is the known outcome of a dependency that lies outside the
// scheduled vertices, such as a unit of an earlier shard of a larger plan.
type Outside uint8

const (
	// OutsideSucceeded is an outside dependency that succeeded or was
	// skipped: it is satisfied from the start.
	OutsideSucceeded Outside = iota + 1
	// OutsideFailed is an outside dependency that did not succeed.
	OutsideFailed
)

// Builder collects what each of n vertices 0..n-1 waits for, and the caps
// and tolerance groups they belong to, then builds a Scheduler. Its methods
// panic on a vertex out of range, as an index expression would.
//
// Cost: O(1) amortized per dependency recorded; Build is O(n + edges).
type Builder struct {
	n     int
	edges []edge // (dependency, dependent, group) in the order given
	// groups[g] is one AnyOf group: its owner and outside members.
	groups []anyOf
	// blocked marks vertices with a failed outside all-of dependency.
	blocked []bool
	caps    capBuilder
	tol     tolerance
	// seen[m] is 1 + the last AnyOf group m joined, to spot repeats.
	seen []int32
}

// edge says that to waits on from, alone (group -1) or as a member of the
// AnyOf group group.
type edge struct {
	from, to int32
	group    int32
}

type anyOf struct {
	owner         int32
	members       int32 // distinct members inside the set
	outsideOK     bool  // an outside member succeeded
	outsideFailed bool  // an outside member failed
}

// NewBuilder starts a scheduler over n vertices without dependencies.
func NewBuilder(n int) *Builder {
	return &Builder{n: n, blocked: make([]bool, n), caps: newCapBuilder(n), tol: newTolerance(n)}
}

func (b *Builder) check(v int) {
	if v < 0 || v >= b.n {
		panic(fmt.Sprintf("dag: vertex %d out of range [0,%d)", v, b.n))
	}
}

// DependsOn records that v runs only after each of deps succeeded or was
// skipped. A repeated dependency is waited for once per mention, which
// comes to the same.
func (b *Builder) DependsOn(v int, deps ...int) {
	b.check(v)
	for _, d := range deps {
		b.check(d)
		b.edges = append(b.edges, edge{from: int32(d), to: int32(v), group: -1})
	}
}

// DependsOnOutside records an all-of dependency of v outside the scheduled
// vertices: OutsideFailed makes v upstream-failed from the start (Cause
// reports -1); OutsideSucceeded changes nothing.
func (b *Builder) DependsOnOutside(v int, o Outside) {
	b.check(v)
	if o == OutsideFailed {
		b.blocked[v] = true
	}
}

// DependsOnAny records an AnyOf group of v: members inside the set and the
// known outcomes of members outside it. The group is satisfied as soon as
// one member succeeded or was skipped (at once if an outside member
// succeeded, or if the group has no member at all) and fails only when
// every member failed. A member named twice counts once.
func (b *Builder) DependsOnAny(v int, members []int, outside ...Outside) {
	b.check(v)
	g := anyOf{owner: int32(v)}
	for _, o := range outside {
		switch o {
		case OutsideSucceeded:
			g.outsideOK = true
		case OutsideFailed:
			g.outsideFailed = true
		}
	}
	gi := int32(len(b.groups))
	if b.seen == nil && len(members) > 0 {
		b.seen = make([]int32, b.n)
	}
	for _, m := range members {
		b.check(m)
		if b.seen[m] == gi+1 {
			continue
		}
		b.seen[m] = gi + 1
		b.edges = append(b.edges, edge{from: int32(m), to: int32(v), group: gi})
		g.members++
	}
	b.groups = append(b.groups, g)
}

// Cap puts v under key: at most limit vertices under one key run at once
// (Fuel's strategy caps). A key's limit is the smallest its vertices give;
// a limit below 1 leaves v uncapped.
func (b *Builder) Cap(v int, key string, limit int) {
	b.check(v)
	if limit >= 1 {
		b.caps.add(v, key, limit)
	}
}

// Tolerate puts v in the tolerance group group as member (Fuel's
// fault_tolerance, whose members are node names): the group tolerates
// failures of up to limit distinct members. A group's limit is the
// smallest its vertices give.
func (b *Builder) Tolerate(v int, group, member string, limit int) {
	b.check(v)
	b.tol.add(v, group, member, limit)
}

// Options steer a Scheduler's run.
type Options struct {
	// Parallelism bounds how many vertices run at once; below 1 means 1.
	Parallelism int
	// Less orders the ready vertices, the least first; ties go to the
	// lower vertex. nil means the lowest vertex first. Its answers must not
	// change while a vertex it compares is ready.
	Less func(a, b int) bool
	// OnChange, when set, is called after every change of a vertex's
	// state, cascades included (a failure upstream-failing its
	// dependents, a success readying them), in the order they happen, so
	// a caller can keep track of what changed without scanning every
	// vertex. It must not call the scheduler back. Cost: one call a change.
	OnChange func(v int, from, to State)
}

// Build returns the scheduler, with every vertex whose dependencies are
// already satisfied ready and every vertex cut off by a failed outside
// dependency upstream-failed (and its dependents after it). The builder
// must not be used afterwards.
func (b *Builder) Build(opts Options) *Scheduler {
	n := b.n
	s := &Scheduler{
		state:       make([]State, n),
		cause:       make([]int32, n),
		waiting:     make([]int32, n),
		groups:      make([]groupState, len(b.groups)),
		parallelism: max(opts.Parallelism, 1),
		open:        n,
		tol:         b.tol,
		onChange:    opts.OnChange,
	}
	s.counts[Pending] = n
	s.out, s.in = adjacency(n, b.edges)
	less := orderBy(opts.Less)
	s.ready = newReadySet(less, b.caps)
	s.less = less

	for _, e := range b.edges {
		if e.group < 0 {
			s.waiting[e.to]++
		}
	}
	for g, gr := range b.groups {
		switch {
		case gr.outsideOK || (gr.members == 0 && !gr.outsideFailed):
			s.groups[g].satisfied = true
		case gr.members == 0:
			b.blocked[gr.owner] = true
		default:
			s.groups[g].alive = gr.members
			s.waiting[gr.owner]++
		}
	}
	for v := range n {
		if b.blocked[v] {
			s.upstreamFail(v, -1)
		}
	}
	for v := range n {
		if s.state[v] == Pending && s.waiting[v] == 0 {
			s.set(v, Ready)
			s.ready.push(v)
		}
	}
	return s
}

// orderBy turns a partial order into a total one, ties to the lower vertex.
func orderBy(less func(a, b int) bool) func(a, b int) bool {
	if less == nil {
		return func(a, b int) bool { return a < b }
	}
	return func(a, b int) bool {
		switch {
		case less(a, b):
			return true
		case less(b, a):
			return false
		}
		return a < b
	}
}

// adj is a compressed adjacency list: the edges of vertex v are
// to[start[v]:start[v+1]], with their AnyOf group (-1 for all-of).
type adj struct {
	start []int32
	to    []int32
	group []int32
}

func (a *adj) of(v int) (to, group []int32) {
	lo, hi := a.start[v], a.start[v+1]
	return a.to[lo:hi], a.group[lo:hi]
}

// adjacency returns the edges by dependency (out: to its dependents) and
// by dependent (in: to its dependencies), each in the order given.
func adjacency(n int, edges []edge) (out, in adj) {
	out = adj{start: make([]int32, n+1), to: make([]int32, len(edges)), group: make([]int32, len(edges))}
	in = adj{start: make([]int32, n+1), to: make([]int32, len(edges)), group: make([]int32, len(edges))}
	for _, e := range edges {
		out.start[e.from+1]++
		in.start[e.to+1]++
	}
	for v := range n {
		out.start[v+1] += out.start[v]
		in.start[v+1] += in.start[v]
	}
	oNext := append([]int32(nil), out.start[:n]...)
	iNext := append([]int32(nil), in.start[:n]...)
	for _, e := range edges {
		k := oNext[e.from]
		out.to[k], out.group[k] = e.to, e.group
		oNext[e.from]++
		k = iNext[e.to]
		in.to[k], in.group[k] = e.from, e.group
		iNext[e.to]++
	}
	return out, in
}
