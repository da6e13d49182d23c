package dag

import "fmt"

// Scheduler decides which vertices 0..n-1 run and when, as a DAG with
// all-of dependencies and AnyOf groups, a parallelism bound, per-key caps
// and tolerance groups (see Builder). It runs nothing itself: the caller
// takes vertices with Next, runs them however it likes and reports each
// with Succeed, Skip or Fail; a held failure waits for Retry, Skip or
// Abandon. It keeps no clock, starts no goroutine and iterates no map, so
// the same calls always get the same answers (which a Temporal workflow
// needs), and it is not safe for concurrent use.
//
// Failure propagates at once: when a vertex fails (or is upstream-failed),
// every pending vertex that needed it becomes UpstreamFailed, transitively,
// and Cause names the dependency responsible. A vertex that depends on
// itself through a cycle never becomes ready.
//
// Cost: O(n + edges) memory. Next, Succeed, Skip, Fail, Retry and Abandon
// cost O(degree + log n) amortized, so a whole run is O((n + edges) log n);
// the accessors are O(1) except Held, O(held).
type Scheduler struct {
	state   []State
	cause   []int32 // UpstreamFailed: the dependency responsible, -1 outside
	waiting []int32 // unsatisfied all-of edges plus unsatisfied groups
	out, in adj
	groups  []groupState

	less        func(a, b int) bool
	ready       readySet
	running     int
	parallelism int
	held        []int // in the order they were held
	open        int   // vertices not in a final state
	counts      [Held + 1]int
	tol         tolerance
	stack       []int32 // scratch of block
	onChange    func(v int, from, to State)
}

type groupState struct {
	alive     int32 // members that may still succeed
	satisfied bool
}

// State is v's state.
func (s *Scheduler) State(v int) State { return s.state[v] }

// Count is the number of vertices in state st.
func (s *Scheduler) Count(st State) int { return s.counts[st] }

// Running is the number of vertices running.
func (s *Scheduler) Running() int { return s.running }

// Held returns the held vertices in the order they were held.
func (s *Scheduler) Held() []int { return append([]int(nil), s.held...) }

// Cause names the dependency whose failure made v upstream-failed: a vertex,
// or -1 for a dependency outside the scheduled set. ok is false when v is
// not upstream-failed.
func (s *Scheduler) Cause(v int) (dep int, ok bool) {
	if s.state[v] != UpstreamFailed {
		return 0, false
	}
	return int(s.cause[v]), true
}

// Next starts the least ready vertex that may start (Options.Less, then
// caps) and returns it, or reports false when the parallelism bound is
// reached or no ready vertex may start.
func (s *Scheduler) Next() (int, bool) {
	if s.running >= s.parallelism {
		return 0, false
	}
	v, ok := s.ready.pop()
	if !ok {
		return 0, false
	}
	s.set(v, Running)
	s.running++
	return v, true
}

// Succeed records that running vertex v succeeded and releases its
// dependents.
func (s *Scheduler) Succeed(v int) {
	s.must(v, "Succeed", Running)
	s.stopped(v)
	s.set(v, Succeeded)
	s.release(v)
}

// Skip ends running or held vertex v as skipped: its dependents take it as
// a success.
func (s *Scheduler) Skip(v int) {
	s.must(v, "Skip", Running, Held)
	s.stopped(v)
	s.set(v, Skipped)
	s.release(v)
}

// Fail records that running vertex v failed and reports whether its
// tolerance group tolerates the failure (Builder.Tolerate). A tolerated
// failure fails v and upstream-fails its dependents; the caller goes on.
// An untolerated one does the same, unless hold is set: then v is held,
// its dependents untouched, until Retry, Skip or Abandon decides.
func (s *Scheduler) Fail(v int, hold bool) (tolerated bool) {
	s.must(v, "Fail", Running)
	s.stopped(v)
	tolerated = s.tol.count(v)
	if hold && !tolerated {
		s.set(v, Held)
		s.held = append(s.held, v)
		return false
	}
	s.set(v, Failed)
	s.block(v)
	return tolerated
}

// Hold makes running vertex v wait for a decision whatever its
// tolerance group allows, without counting it as a failure of the group:
// a vertex whose outcome is unknown, neither failed nor succeeded.
func (s *Scheduler) Hold(v int) {
	s.must(v, "Hold", Running)
	s.stopped(v)
	s.set(v, Held)
	s.held = append(s.held, v)
}

// Abandon ends running or held vertex v as failed without counting it
// against its tolerance group, for a vertex interrupted, or given up by a
// decision, rather than failing on its own. Its dependents are
// upstream-failed.
func (s *Scheduler) Abandon(v int) {
	s.must(v, "Abandon", Running, Held)
	s.stopped(v)
	s.set(v, Failed)
	s.block(v)
}

// Retry makes held vertex v ready to run again.
func (s *Scheduler) Retry(v int) {
	s.must(v, "Retry", Held)
	s.stopped(v)
	s.set(v, Ready)
	s.ready.push(v)
}

func (s *Scheduler) must(v int, op string, want ...State) {
	for _, w := range want {
		if s.state[v] == w {
			return
		}
	}
	panic(fmt.Sprintf("dag: %s(%d) on a %s vertex", op, v, s.state[v]))
}

// stopped takes v out of the running or held vertices.
func (s *Scheduler) stopped(v int) {
	switch s.state[v] {
	case Running:
		s.running--
		s.ready.finished(v)
	case Held:
		for k, h := range s.held {
			if h == v {
				s.held = append(s.held[:k], s.held[k+1:]...)
				break
			}
		}
	}
}

func (s *Scheduler) set(v int, st State) {
	old := s.state[v]
	s.counts[old]--
	s.counts[st]++
	s.state[v] = st
	if st.Final() && !old.Final() {
		s.open--
	}
	if s.onChange != nil {
		s.onChange(v, old, st)
	}
}

// release satisfies what succeeded or skipped vertex u means to its
// pending dependents, making ready those with nothing left to wait for.
func (s *Scheduler) release(u int) {
	to, group := s.out.of(u)
	for k, w := range to {
		v := int(w)
		if s.state[v] != Pending {
			continue
		}
		if g := group[k]; g >= 0 {
			if s.groups[g].satisfied {
				continue
			}
			s.groups[g].satisfied = true
		}
		if s.waiting[v]--; s.waiting[v] == 0 {
			s.set(v, Ready)
			s.ready.push(v)
		}
	}
}

// block upstream-fails the pending dependents that needed failed vertex u,
// and theirs after them.
func (s *Scheduler) block(u int) {
	stack := append(s.stack[:0], int32(u))
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		to, group := s.out.of(int(x))
		for k, w := range to {
			if s.state[w] != Pending {
				continue
			}
			if g := group[k]; g >= 0 {
				gs := &s.groups[g]
				if gs.satisfied {
					continue
				}
				if gs.alive--; gs.alive > 0 {
					continue
				}
			}
			s.set(int(w), UpstreamFailed)
			s.cause[w] = x
			stack = append(stack, w)
		}
	}
	s.stack = stack
}

// upstreamFail fails pending vertex v for cause (-1: outside) and blocks
// its dependents.
func (s *Scheduler) upstreamFail(v int, cause int32) {
	if s.state[v] != Pending {
		return
	}
	s.set(v, UpstreamFailed)
	s.cause[v] = cause
	s.block(v)
}
