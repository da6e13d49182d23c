package dag

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzBytes hands out the fuzz input a byte at a time, then zeros, which
// the run below reads as "make progress" so every input ends.
type fuzzBytes struct {
	data []byte
	k    int
}

func (f *fuzzBytes) next() int {
	if f.k >= len(f.data) {
		return 0
	}
	f.k++
	return int(f.data[f.k-1])
}

func (f *fuzzBytes) intn(n int) int { return f.next() % n }

// fuzzGroup is an AnyOf group as the model sees it.
type fuzzGroup struct {
	members                  []int
	outsideOK, outsideFailed bool
}

// fuzzModel is a random DAG with caps and tolerance groups, and the
// bookkeeping of a run written the plain way, against which the scheduler
// is checked after every call.
type fuzzModel struct {
	n           int
	deps        [][]int
	groups      [][]fuzzGroup
	outFailed   []bool
	key         []int // -1: uncapped
	limit       map[int]int
	tolGroup    []int // -1: none
	tolMember   []int
	tolLimit    map[int]int
	prio        []int // nil: by index
	parallelism int

	started   []bool
	seq       []int // last completion, for the reverse order
	clock     int
	tolFailed map[[2]int]bool
}

func newFuzzModel(in *fuzzBytes) *fuzzModel {
	n := 1 + in.intn(24)
	m := &fuzzModel{
		n: n, deps: make([][]int, n), groups: make([][]fuzzGroup, n), outFailed: make([]bool, n),
		key: make([]int, n), limit: map[int]int{}, tolGroup: make([]int, n), tolMember: make([]int, n),
		tolLimit: map[int]int{}, parallelism: 1 + in.intn(4),
		started: make([]bool, n), seq: make([]int, n), tolFailed: map[[2]int]bool{},
	}
	// A random topological order: a vertex depends only on earlier ones.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := in.intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	for pos, v := range order {
		m.key[v], m.tolGroup[v] = -1, -1
		if pos > 0 {
			for range in.intn(3) {
				m.deps[v] = append(m.deps[v], order[in.intn(pos)])
			}
			if in.intn(3) == 0 {
				var g fuzzGroup
				for range in.intn(4) {
					g.members = append(g.members, order[in.intn(pos)])
				}
				switch in.intn(6) {
				case 0:
					g.outsideOK = true
				case 1:
					g.outsideFailed = true
				}
				m.groups[v] = append(m.groups[v], g)
			}
		}
		if in.intn(10) == 0 {
			m.outFailed[v] = true
		}
		if in.intn(3) == 0 {
			k := in.intn(2)
			l := 1 + in.intn(2)
			m.key[v] = k
			if old, ok := m.limit[k]; !ok || l < old {
				m.limit[k] = l
			}
		}
		if in.intn(3) == 0 {
			g := in.intn(2)
			l := in.intn(3)
			m.tolGroup[v], m.tolMember[v] = g, in.intn(3)
			if old, ok := m.tolLimit[g]; !ok || l < old {
				m.tolLimit[g] = l
			}
		}
	}
	if in.intn(2) == 0 {
		m.prio = make([]int, n)
		for v := range m.prio {
			m.prio[v] = in.intn(4)
		}
	}
	return m
}

func (m *fuzzModel) less(a, b int) bool { return m.prio[a] < m.prio[b] }

func (m *fuzzModel) build() *Scheduler {
	b := NewBuilder(m.n)
	for v := range m.n {
		b.DependsOn(v, m.deps[v]...)
		if m.outFailed[v] {
			b.DependsOnOutside(v, OutsideFailed)
		}
		b.DependsOnOutside(v, OutsideSucceeded)
		for _, g := range m.groups[v] {
			var outside []Outside
			if g.outsideOK {
				outside = append(outside, OutsideSucceeded)
			}
			if g.outsideFailed {
				outside = append(outside, OutsideFailed)
			}
			b.DependsOnAny(v, g.members, outside...)
		}
		if m.key[v] >= 0 {
			b.Cap(v, fmt.Sprint("key", m.key[v]), m.limit[m.key[v]])
		}
		if m.tolGroup[v] >= 0 {
			b.Tolerate(v, fmt.Sprint("group", m.tolGroup[v]), fmt.Sprint("node", m.tolMember[v]), m.tolLimit[m.tolGroup[v]])
		}
	}
	opts := Options{Parallelism: m.parallelism}
	if m.prio != nil {
		opts.Less = m.less
	}
	return b.Build(opts)
}

func failedState(st State) bool { return st == Failed || st == UpstreamFailed }

// needs reports, from the states of v's dependencies, whether v may run
// (every all-of dependency and one member of each group satisfied) and
// whether it never can (a needed dependency did not succeed).
func (m *fuzzModel) needs(s *Scheduler, v int) (ok, never bool) {
	ok = !m.outFailed[v]
	never = m.outFailed[v]
	for _, d := range m.deps[v] {
		st := s.State(d)
		ok = ok && st.Satisfies()
		never = never || failedState(st)
	}
	for _, g := range m.groups[v] {
		sat := g.outsideOK || (len(g.members) == 0 && !g.outsideFailed)
		dead := !sat
		for _, d := range g.members {
			st := s.State(d)
			sat = sat || st.Satisfies()
			dead = dead && failedState(st)
		}
		ok = ok && sat
		never = never || (dead && !sat)
	}
	return ok, never
}

// check holds after every call.
func (m *fuzzModel) check(t *testing.T, s *Scheduler) {
	require.LessOrEqual(t, s.Running(), m.parallelism)
	perKey := map[int]int{}
	running := 0
	for v := range m.n {
		st := s.State(v)
		ok, never := m.needs(s, v)
		switch st {
		case Running:
			running++
			if m.key[v] >= 0 {
				perKey[m.key[v]]++
			}
			require.True(t, ok, "vertex %d runs before its dependencies succeeded", v)
		case Ready:
			require.True(t, ok, "vertex %d ready before its dependencies succeeded", v)
		case Pending:
			require.False(t, m.started[v], "vertex %d ran and is pending", v)
			require.False(t, ok, "vertex %d pending with its dependencies satisfied", v)
			require.False(t, never, "vertex %d pending though a needed dependency failed", v)
		case UpstreamFailed:
			require.False(t, m.started[v], "vertex %d ran and is upstream-failed", v)
			require.True(t, never, "vertex %d upstream-failed though nothing it needs failed", v)
			dep, has := s.Cause(v)
			require.True(t, has)
			if dep < 0 {
				outside := m.outFailed[v]
				for _, g := range m.groups[v] {
					outside = outside || (g.outsideFailed && len(g.members) == 0)
				}
				require.True(t, outside, "vertex %d blames an outside dependency it lacks", v)
			} else {
				require.True(t, failedState(s.State(dep)), "vertex %d blames %d, which is %s", v, dep, s.State(dep))
				require.True(t, m.dependsOn(v, dep), "vertex %d blames %d, not a dependency", v, dep)
			}
		default:
			require.True(t, m.started[v], "vertex %d is %s without having run", v, st)
		}
	}
	require.Equal(t, running, s.Running())
	for k, n := range perKey {
		require.LessOrEqual(t, n, m.limit[k], "key %d over its cap", k)
	}
}

func (m *fuzzModel) dependsOn(v, d int) bool {
	for _, x := range m.deps[v] {
		if x == d {
			return true
		}
	}
	for _, g := range m.groups[v] {
		for _, x := range g.members {
			if x == d {
				return true
			}
		}
	}
	return false
}

// expectNext is the vertex Next must start, or -1.
func (m *fuzzModel) expectNext(s *Scheduler) int {
	if s.Running() >= m.parallelism {
		return -1
	}
	perKey := map[int]int{}
	for v := range m.n {
		if s.State(v) == Running && m.key[v] >= 0 {
			perKey[m.key[v]]++
		}
	}
	best := -1
	for v := range m.n {
		if s.State(v) != Ready || (m.key[v] >= 0 && perKey[m.key[v]] >= m.limit[m.key[v]]) {
			continue
		}
		if best < 0 || (m.prio != nil && m.less(v, best)) {
			best = v
		}
	}
	return best
}

func (m *fuzzModel) tolerates(v int) bool {
	g := m.tolGroup[v]
	if g < 0 {
		return false
	}
	m.tolFailed[[2]int{g, m.tolMember[v]}] = true
	n := 0
	for k := range m.tolFailed {
		if k[0] == g {
			n++
		}
	}
	return n <= m.tolLimit[g]
}

// run starts, finishes and decides vertices as the input says until
// nothing is left to do.
func (m *fuzzModel) run(t *testing.T, s *Scheduler, in *fuzzBytes) {
	for range 10_000 {
		for range 1 + in.intn(3) {
			want := m.expectNext(s)
			v, ok := s.Next()
			if want < 0 {
				require.False(t, ok, "Next started %d", v)
				break
			}
			require.True(t, ok, "Next started nothing, want %d", want)
			require.Equal(t, want, v)
			m.started[v] = true
			m.check(t, s)
		}
		var running []int
		for v := range m.n {
			if s.State(v) == Running {
				running = append(running, v)
			}
		}
		held := s.Held()
		if len(running) == 0 && len(held) == 0 {
			if _, ok := s.Next(); !ok {
				return
			}
			t.Fatal("Next starts a vertex once the run seemed over")
		}
		if len(held) > 0 && (len(running) == 0 || in.intn(2) == 1) {
			v := held[in.intn(len(held))]
			switch in.intn(3) {
			case 0:
				s.Skip(v)
			case 1:
				s.Retry(v)
			case 2:
				s.Abandon(v)
			}
			m.check(t, s)
			continue
		}
		v := running[in.intn(len(running))]
		m.clock++
		m.seq[v] = m.clock
		switch in.intn(5) {
		case 0:
			s.Succeed(v)
		case 1:
			s.Skip(v)
		case 2:
			tol := m.tolerates(v)
			require.Equal(t, tol, s.Fail(v, false))
			require.Equal(t, Failed, s.State(v))
		case 3:
			tol := m.tolerates(v)
			require.Equal(t, tol, s.Fail(v, true))
			if tol {
				require.Equal(t, Failed, s.State(v))
			} else {
				require.Equal(t, Held, s.State(v))
			}
		case 4:
			s.Abandon(v)
		}
		m.check(t, s)
	}
	t.Fatal("the run did not end")
}

// checkEnd holds once the run is over: every vertex in exactly one final
// state, upstream-failed exactly when a needed dependency did not succeed.
func (m *fuzzModel) checkEnd(t *testing.T, s *Scheduler) {
	require.True(t, s.Finished())
	final := 0
	for st := Pending; st <= Held; st++ {
		if st.Final() {
			final += s.Count(st)
		} else {
			require.Zero(t, s.Count(st), "vertices left %s", st)
		}
	}
	require.Equal(t, m.n, final)
	for v := range m.n {
		st := s.State(v)
		require.True(t, st.Final(), "vertex %d ends %s", v, st)
		ok, never := m.needs(s, v)
		require.Equal(t, st == UpstreamFailed, !m.started[v], "vertex %d", v)
		if st == UpstreamFailed {
			require.True(t, never)
		} else {
			require.True(t, ok, "vertex %d ran without its dependencies", v)
		}
	}
}

// checkReverse undoes a random subset of what ran, most recently completed
// first, and checks that a vertex comes only after every subset vertex
// depending on it, directly or not, and that the least free one goes first.
func (m *fuzzModel) checkReverse(t *testing.T, s *Scheduler, in *fuzzBytes) {
	var subset []int
	member := make([]bool, m.n)
	for v := range m.n {
		if m.started[v] && in.intn(3) != 0 {
			subset = append(subset, v)
			member[v] = true
		}
	}
	// dependents[v]: every vertex depending on v, transitively.
	dependents := make([][]bool, m.n)
	for v := range m.n {
		dependents[v] = make([]bool, m.n)
	}
	var mark func(root, v int)
	mark = func(root, v int) {
		for w := range m.n {
			if !dependents[root][w] && m.dependsOn(w, v) {
				dependents[root][w] = true
				mark(root, w)
			}
		}
	}
	for v := range m.n {
		mark(v, v)
	}
	parallelism := 1 + in.intn(3)
	recent := func(a, b int) bool { return m.seq[a] > m.seq[b] }
	r := s.Reverse(subset, parallelism, recent)
	done := make([]bool, m.n)
	out := map[int]bool{}
	yielded := 0
	free := func(v int) bool {
		if !member[v] || done[v] || out[v] {
			return false
		}
		for w := range m.n {
			if dependents[v][w] && member[w] && !done[w] {
				return false
			}
		}
		return true
	}
	for range 10_000 {
		for {
			want := -1
			if len(out) < parallelism {
				for v := range m.n {
					if free(v) && (want < 0 || recent(v, want) || (!recent(want, v) && v < want)) {
						want = v
					}
				}
			}
			v, ok := r.Next()
			if want < 0 {
				require.False(t, ok, "Reverse handed out %d", v)
				break
			}
			require.True(t, ok, "Reverse handed out nothing, want %d", want)
			require.Equal(t, want, v)
			out[v] = true
			yielded++
			require.LessOrEqual(t, r.Running(), parallelism)
		}
		if len(out) == 0 {
			break
		}
		var outs []int
		for v := range m.n {
			if out[v] {
				outs = append(outs, v)
			}
		}
		v := outs[in.intn(len(outs))]
		delete(out, v)
		done[v] = true
		r.Done(v)
	}
	require.True(t, r.Finished())
	require.Equal(t, len(subset), yielded)
}

func FuzzScheduler(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte("a fairly long seed so that the graph has edges, groups, caps and tolerance"))
	f.Add([]byte{23, 3, 0, 1, 2, 0, 0, 1, 2, 2, 1, 0, 0, 2, 1, 0, 4, 3, 3, 2, 1, 0, 9, 9, 9, 3, 3, 3, 1, 1, 1})
	for seed := range 20 {
		b := make([]byte, 200)
		x := uint32(seed*2654435761 + 1)
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{data: data}
		m := newFuzzModel(in)
		s := m.build()
		m.check(t, s)
		m.run(t, s, in)
		m.checkEnd(t, s)
		m.checkReverse(t, s, in)
	})
}
