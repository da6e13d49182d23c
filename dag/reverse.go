package dag

// Reverse hands out a subset of a Scheduler's vertices in reverse
// dependency order, as a compensation undoes what they did: a vertex comes
// only after every vertex of the subset that depends on it, directly or
// through vertices outside the subset (all-of and AnyOf edges alike), was
// reported Done. Among the vertices free to go, the least by the given
// order goes first ("most recently completed first" for a compensation),
// and at most parallelism are out at once. It uses the scheduler's graph
// only, not its states, and shares nothing else with it.
//
// Vertices outside the subset pass through at once: a vertex is released
// when all of its dependents are, and a subset vertex when it is also Done.
// That is what makes the order transitive without computing a closure.
//
// Cost: O(n + edges) to build, O(degree + log n) amortized per Next and
// Done; O(n + edges) memory.
type Reverse struct {
	in          *adj
	member      []bool
	blockers    []int32 // dependents (edges) not yet released
	ready       vheap
	running     int
	parallelism int
	left        int     // subset vertices not yet Done
	stack       []int32 // scratch of release
}

// Reverse starts a reverse walk over subset (repeats count once), at most
// parallelism (below 1 means 1) handed out at once, the least by less
// first (nil: the lowest vertex; ties go to the lower vertex). less must
// not change its answers during the walk.
func (s *Scheduler) Reverse(subset []int, parallelism int, less func(a, b int) bool) *Reverse {
	n := len(s.state)
	r := &Reverse{
		in:          &s.in,
		member:      make([]bool, n),
		blockers:    make([]int32, n),
		ready:       vheap{less: orderBy(less)},
		parallelism: max(parallelism, 1),
	}
	for _, v := range subset {
		if !r.member[v] {
			r.member[v] = true
			r.left++
		}
	}
	for v := range n {
		r.blockers[v] = s.out.start[v+1] - s.out.start[v]
	}
	for v := range n {
		if s.out.start[v+1] == s.out.start[v] { // no dependents
			if r.member[v] {
				r.ready.push(v)
			} else {
				r.release(v)
			}
		}
	}
	return r
}

// Next hands out the next vertex free to go, or reports false when none is
// or parallelism are out.
func (r *Reverse) Next() (int, bool) {
	if r.running >= r.parallelism || r.ready.len() == 0 {
		return 0, false
	}
	r.running++
	return r.ready.pop(), true
}

// Done reports that vertex v, handed out by Next, is finished, freeing what
// it depends on.
func (r *Reverse) Done(v int) {
	r.running--
	r.left--
	r.release(v)
}

// Finished reports whether every subset vertex is Done.
func (r *Reverse) Finished() bool { return r.left == 0 }

// release frees the dependencies of released vertex v; those outside the
// subset pass through at once.
func (r *Reverse) release(v int) {
	stack := append(r.stack[:0], int32(v))
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deps, _ := r.in.of(int(x))
		for _, d := range deps {
			if r.blockers[d]--; r.blockers[d] > 0 {
				continue
			}
			if r.member[d] {
				r.ready.push(int(d))
			} else {
				stack = append(stack, d)
			}
		}
	}
	r.stack = stack
}
