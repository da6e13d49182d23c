package dag

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one call on a scheduler and what it must answer.
type step struct {
	op string // next, succeed, skip, fail, hold, retry, abandon
	v  int    // the vertex (next: the one expected, -1 for none)
	// tolerated is what fail and hold must report.
	tolerated bool
}

func next(v int) step          { return step{op: "next", v: v} }
func succeed(v int) step       { return step{op: "succeed", v: v} }
func skip(v int) step          { return step{op: "skip", v: v} }
func fail(v int) step          { return step{op: "fail", v: v} }
func hold(v int) step          { return step{op: "hold", v: v} }
func retry(v int) step         { return step{op: "retry", v: v} }
func abandon(v int) step       { return step{op: "abandon", v: v} }
func failTolerated(v int) step { return step{op: "fail", v: v, tolerated: true} }

func play(t *testing.T, s *Scheduler, steps []step) {
	t.Helper()
	for k, st := range steps {
		where := fmt.Sprintf("step %d (%s %d)", k, st.op, st.v)
		switch st.op {
		case "next":
			v, ok := s.Next()
			if st.v < 0 {
				require.False(t, ok, "%s: got %d", where, v)
				continue
			}
			require.True(t, ok, where)
			require.Equal(t, st.v, v, where)
		case "succeed":
			s.Succeed(st.v)
		case "skip":
			s.Skip(st.v)
		case "fail":
			require.Equal(t, st.tolerated, s.Fail(st.v, false), where)
		case "hold":
			require.Equal(t, st.tolerated, s.Fail(st.v, true), where)
		case "retry":
			s.Retry(st.v)
		case "abandon":
			s.Abandon(st.v)
		default:
			t.Fatalf("unknown op %q", st.op)
		}
	}
}

// cause is an expected Cause: v upstream-failed because of dep.
type cause struct{ v, dep int }

func TestSchedulerTransitions(t *testing.T) {
	const (
		P  = Pending
		R  = Ready
		Ru = Running
		S  = Succeeded
		Sk = Skipped
		F  = Failed
		U  = UpstreamFailed
		H  = Held
	)
	tests := []struct {
		name   string
		n      int
		build  func(b *Builder)
		opts   Options
		steps  []step
		want   []State
		causes []cause
		held   []int
	}{
		{
			name: "a chain runs in order", n: 3,
			build: func(b *Builder) { b.DependsOn(1, 0); b.DependsOn(2, 1) },
			opts:  Options{Parallelism: 4},
			steps: []step{next(0), next(-1), succeed(0), next(1), next(-1), succeed(1), next(2), succeed(2)},
			want:  []State{S, S, S},
		},
		{
			name: "nothing started stays pending or ready", n: 3,
			build: func(b *Builder) { b.DependsOn(2, 0, 1) },
			want:  []State{R, R, P},
		},
		{
			name: "a vertex waits for every all-of dependency", n: 3,
			build: func(b *Builder) { b.DependsOn(2, 0, 1) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(1), succeed(1), next(-1), succeed(0), next(2)},
			want:  []State{S, S, Ru},
		},
		{
			name: "a repeated dependency is waited for once", n: 2,
			build: func(b *Builder) { b.DependsOn(1, 0, 0); b.DependsOn(1, 0) },
			steps: []step{next(0), succeed(0), next(1)},
			want:  []State{S, Ru},
		},
		{
			name: "a failure upstream-fails dependents transitively, not independents", n: 4,
			build: func(b *Builder) { b.DependsOn(1, 0); b.DependsOn(2, 1) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(3), fail(0), next(-1), succeed(3)},
			want:  []State{F, U, U, S}, causes: []cause{{1, 0}, {2, 1}},
		},
		{
			name: "a skipped vertex releases its dependents", n: 2,
			build: func(b *Builder) { b.DependsOn(1, 0) },
			steps: []step{next(0), skip(0), next(1), succeed(1)},
			want:  []State{Sk, S},
		},
		{
			name: "one member satisfies an AnyOf group", n: 3,
			build: func(b *Builder) { b.DependsOnAny(2, []int{0, 1}) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(1), fail(0), next(-1), succeed(1), next(2)},
			want:  []State{F, S, Ru},
		},
		{
			name: "a failure after the group is satisfied changes nothing", n: 3,
			build: func(b *Builder) { b.DependsOnAny(2, []int{0, 1}) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(1), succeed(0), fail(1), next(2)},
			want:  []State{S, F, Ru},
		},
		{
			name: "an AnyOf group fails when every member failed", n: 4,
			build: func(b *Builder) { b.DependsOnAny(2, []int{0, 1}); b.DependsOn(3, 2) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(1), fail(1), fail(0), next(-1)},
			want:  []State{F, F, U, U}, causes: []cause{{2, 0}, {3, 2}},
		},
		{
			name: "an upstream-failed member counts as failed in a group", n: 4,
			build: func(b *Builder) { b.DependsOn(1, 0); b.DependsOnAny(3, []int{1, 2}) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(2), fail(2), fail(0)},
			want:  []State{F, U, F, U}, causes: []cause{{1, 0}, {3, 1}},
		},
		{
			name: "a vertex with all-of and AnyOf waits for both", n: 4,
			build: func(b *Builder) { b.DependsOn(3, 0); b.DependsOnAny(3, []int{1, 2}) },
			opts:  Options{Parallelism: 3},
			steps: []step{next(0), next(1), next(2), succeed(1), next(-1), succeed(0), next(3)},
			want:  []State{S, S, Ru, Ru},
		},
		{
			name: "an empty AnyOf group is satisfied", n: 1,
			build: func(b *Builder) { b.DependsOnAny(0, nil) },
			steps: []step{next(0)},
			want:  []State{Ru},
		},
		{
			name: "a failed outside dependency upstream-fails at once", n: 3,
			build: func(b *Builder) { b.DependsOnOutside(1, OutsideFailed); b.DependsOn(2, 1) },
			steps: []step{next(0), succeed(0), next(-1)},
			want:  []State{S, U, U}, causes: []cause{{1, -1}, {2, 1}},
		},
		{
			name: "a succeeded outside dependency is satisfied", n: 1,
			build: func(b *Builder) { b.DependsOnOutside(0, OutsideSucceeded) },
			want:  []State{R},
		},
		{
			name: "an outside member that succeeded satisfies a group", n: 2,
			build: func(b *Builder) { b.DependsOnAny(1, []int{0}, OutsideSucceeded) },
			want:  []State{R, R},
		},
		{
			name: "a group of failed outside members fails", n: 1,
			build: func(b *Builder) { b.DependsOnAny(0, nil, OutsideFailed, OutsideFailed) },
			want:  []State{U}, causes: []cause{{0, -1}},
		},
		{
			name: "a failed outside member leaves the inside ones to decide", n: 2,
			build: func(b *Builder) { b.DependsOnAny(1, []int{0}, OutsideFailed) },
			steps: []step{next(0), fail(0)},
			want:  []State{F, U}, causes: []cause{{1, 0}},
		},
		{
			name: "a held failure neither releases nor fails its dependents", n: 3,
			build: func(b *Builder) { b.DependsOn(1, 0) },
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(2), hold(0), next(-1)},
			want:  []State{H, P, Ru}, held: []int{0},
		},
		{
			name: "retry makes a held vertex ready again", n: 2,
			build: func(b *Builder) { b.DependsOn(1, 0) },
			steps: []step{next(0), hold(0), retry(0), next(0), succeed(0), next(1)},
			want:  []State{S, Ru},
		},
		{
			name: "skip of a held vertex releases its dependents", n: 2,
			build: func(b *Builder) { b.DependsOn(1, 0) },
			steps: []step{next(0), hold(0), skip(0), next(1)},
			want:  []State{Sk, Ru},
		},
		{
			name: "abandon of a held vertex upstream-fails its dependents", n: 2,
			build: func(b *Builder) { b.DependsOn(1, 0) },
			steps: []step{next(0), hold(0), abandon(0)},
			want:  []State{F, U}, causes: []cause{{1, 0}},
		},
		{
			name: "held vertices are listed in the order held", n: 3,
			opts:  Options{Parallelism: 3},
			steps: []step{next(0), next(1), next(2), hold(2), hold(0), succeed(1)},
			want:  []State{H, S, H}, held: []int{2, 0},
		},
		{
			name: "abandon of a running vertex fails it", n: 2,
			build: func(b *Builder) { b.DependsOn(1, 0) },
			steps: []step{next(0), abandon(0)},
			want:  []State{F, U}, causes: []cause{{1, 0}},
		},
		{
			name: "parallelism bounds the running vertices", n: 4,
			opts:  Options{Parallelism: 2},
			steps: []step{next(0), next(1), next(-1), succeed(1), next(2), next(-1)},
			want:  []State{Ru, S, Ru, R},
		},
		{
			name: "parallelism below one means one", n: 2,
			steps: []step{next(0), next(-1)},
			want:  []State{Ru, R},
		},
		{
			name: "a priority orders the ready vertices", n: 4,
			opts:  Options{Parallelism: 1, Less: func(a, b int) bool { return a > b }},
			steps: []step{next(3), succeed(3), next(2), succeed(2), next(1)},
			want:  []State{R, Ru, S, S},
		},
		{
			name: "priority ties go to the lower vertex", n: 4,
			opts:  Options{Parallelism: 1, Less: func(a, b int) bool { return a%2 < b%2 }},
			steps: []step{next(0), succeed(0), next(2), succeed(2), next(1)},
			want:  []State{S, Ru, S, R},
		},
		{
			name: "a vertex made ready later still goes by index", n: 4,
			build: func(b *Builder) { b.DependsOn(0, 3) },
			opts:  Options{Parallelism: 1},
			steps: []step{next(1), succeed(1), next(2), succeed(2), next(3), succeed(3), next(0)},
			want:  []State{Ru, S, S, S},
		},
		{
			name: "a cap bounds the running vertices of one key", n: 5,
			build: func(b *Builder) {
				for v := range 4 {
					b.Cap(v, "restart", 2)
				}
			},
			opts:  Options{Parallelism: 10},
			steps: []step{next(0), next(1), next(4), next(-1), succeed(1), next(2), next(-1), succeed(0), succeed(2), next(3)},
			want:  []State{S, S, S, Ru, Ru},
		},
		{
			name: "caps of different keys are independent", n: 4,
			build: func(b *Builder) { b.Cap(0, "a", 1); b.Cap(1, "a", 1); b.Cap(2, "b", 1); b.Cap(3, "b", 1) },
			opts:  Options{Parallelism: 10},
			steps: []step{next(0), next(2), next(-1), hold(2), next(3), retry(2), next(-1), succeed(3), next(2)},
			want:  []State{Ru, R, Ru, S},
		},
		{
			name: "a key's limit is the smallest given", n: 3,
			build: func(b *Builder) { b.Cap(0, "k", 3); b.Cap(1, "k", 1); b.Cap(2, "k", 2) },
			opts:  Options{Parallelism: 10},
			steps: []step{next(0), next(-1)},
			want:  []State{Ru, R, R},
		},
		{
			name: "a capped vertex gives way to the next uncapped one in order", n: 3,
			build: func(b *Builder) { b.Cap(0, "k", 1); b.Cap(1, "k", 1) },
			opts:  Options{Parallelism: 2, Less: func(a, b int) bool { return a > b }},
			steps: []step{next(2), next(1), next(-1), succeed(2), next(-1), succeed(1), next(0)},
			want:  []State{Ru, S, S},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuilder(tt.n)
			if tt.build != nil {
				tt.build(b)
			}
			s := b.Build(tt.opts)
			play(t, s, tt.steps)
			got := make([]State, tt.n)
			for v := range got {
				got[v] = s.State(v)
			}
			assert.Equal(t, tt.want, got)
			for _, c := range tt.causes {
				dep, ok := s.Cause(c.v)
				if assert.True(t, ok, "vertex %d has no cause", c.v) {
					assert.Equal(t, c.dep, dep, "cause of %d", c.v)
				}
			}
			assert.Equal(t, tt.held, nilIfEmpty(s.Held()))
			total, final := 0, 0
			for st := Pending; st <= Held; st++ {
				total += s.Count(st)
				if st.Final() {
					final += s.Count(st)
				}
			}
			assert.Equal(t, tt.n, total, "counts")
			assert.Equal(t, final == tt.n, s.Finished())
		})
	}
}

func nilIfEmpty(vs []int) []int {
	if len(vs) == 0 {
		return nil
	}
	return vs
}

func TestSchedulerCauseOnlyForUpstreamFailed(t *testing.T) {
	s := NewBuilder(1).Build(Options{})
	_, ok := s.Cause(0)
	assert.False(t, ok)
}

func TestSchedulerRefusesImpossibleTransitions(t *testing.T) {
	tests := []struct {
		name string
		call func(s *Scheduler)
		want string
	}{
		{"succeed a ready vertex", func(s *Scheduler) { s.Succeed(0) }, "dag: Succeed(0) on a ready vertex"},
		{"fail a pending vertex", func(s *Scheduler) { s.Fail(1, false) }, "dag: Fail(1) on a pending vertex"},
		{"retry a running vertex", func(s *Scheduler) { s.Next(); s.Retry(0) }, "dag: Retry(0) on a running vertex"},
		{"skip a succeeded vertex", func(s *Scheduler) { s.Next(); s.Succeed(0); s.Skip(0) }, "dag: Skip(0) on a succeeded vertex"},
		{"abandon a ready vertex", func(s *Scheduler) { s.Abandon(0) }, "dag: Abandon(0) on a ready vertex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuilder(2)
			b.DependsOn(1, 0)
			s := b.Build(Options{})
			assert.PanicsWithValue(t, tt.want, func() { tt.call(s) })
		})
	}
	assert.PanicsWithValue(t, "dag: vertex 2 out of range [0,2)", func() { NewBuilder(2).DependsOn(0, 2) })
}

func TestSchedulerIsDeterministic(t *testing.T) {
	run := func() []int {
		b := NewBuilder(50)
		for v := 1; v < 50; v++ {
			b.DependsOn(v, (v*7)%v)
			if v%5 == 0 {
				b.DependsOnAny(v, []int{v - 1, v / 2})
			}
			b.Cap(v, fmt.Sprint("k", v%3), 1+v%2)
		}
		s := b.Build(Options{Parallelism: 3})
		var order []int
		for !s.Finished() {
			for {
				v, ok := s.Next()
				if !ok {
					break
				}
				order = append(order, v)
			}
			// Finish the oldest running vertex; fail every seventh.
			for _, v := range order {
				if s.State(v) == Running {
					if v%7 == 3 {
						s.Fail(v, false)
					} else {
						s.Succeed(v)
					}
					break
				}
			}
		}
		return order
	}
	first := run()
	for range 5 {
		require.Equal(t, first, run())
	}
}

func TestSchedulerTolerance(t *testing.T) {
	// Vertices 0..4 run on nodes n1, n1, n2, n3, n4 in group g (limit 2);
	// vertex 5 depends on 0; vertex 6 is in no group.
	nodes := []string{"n1", "n1", "n2", "n3", "n4"}
	build := func() *Scheduler {
		b := NewBuilder(7)
		for v, n := range nodes {
			b.Tolerate(v, "g", n, 2)
		}
		b.DependsOn(5, 0)
		return b.Build(Options{Parallelism: 10})
	}
	t.Run("distinct members count, a repeated member costs nothing", func(t *testing.T) {
		s := build()
		for range 7 {
			s.Next()
		}
		play(t, s, []step{failTolerated(0), failTolerated(1), failTolerated(2), fail(3)})
		failed, limit, ok := s.Failures("g")
		assert.True(t, ok)
		assert.Equal(t, 3, failed)
		assert.Equal(t, 2, limit)
		// A tolerated failure still fails its dependents.
		assert.Equal(t, UpstreamFailed, s.State(5))
		assert.Equal(t, Failed, s.State(3))
	})
	t.Run("past the tolerance a failure may be held", func(t *testing.T) {
		s := build()
		for range 7 {
			s.Next()
		}
		play(t, s, []step{failTolerated(2), failTolerated(3), hold(4)})
		assert.Equal(t, Held, s.State(4))
		// Abandoning it does not count it again; a vertex without a group
		// is never tolerated.
		s.Abandon(4)
		failed, _, _ := s.Failures("g")
		assert.Equal(t, 3, failed)
		assert.False(t, s.Fail(6, false))
	})
	t.Run("within the tolerance hold does not hold", func(t *testing.T) {
		s := build()
		s.Next()
		play(t, s, []step{{op: "hold", v: 0, tolerated: true}})
		assert.Equal(t, Failed, s.State(0))
		assert.Empty(t, s.Held())
	})
	t.Run("an unknown outcome is held within the tolerance and not counted", func(t *testing.T) {
		s := build()
		s.Next()
		s.Hold(0)
		assert.Equal(t, Held, s.State(0))
		assert.Equal(t, []int{0}, s.Held())
		failed, _, _ := s.Failures("g")
		assert.Zero(t, failed)
		assert.Equal(t, Pending, s.State(5), "its dependents wait")
		s.Retry(0)
		v, ok := s.Next()
		require.True(t, ok)
		assert.Equal(t, 0, v)
		s.Succeed(0)
		assert.Empty(t, s.Held())
	})
	t.Run("abandon is not counted", func(t *testing.T) {
		s := build()
		s.Next()
		s.Abandon(0)
		failed, _, _ := s.Failures("g")
		assert.Zero(t, failed)
	})
	t.Run("a group's limit is the smallest given; unknown groups", func(t *testing.T) {
		b := NewBuilder(2)
		b.Tolerate(0, "g", "a", 3)
		b.Tolerate(1, "g", "b", 0)
		s := b.Build(Options{Parallelism: 2})
		s.Next()
		assert.False(t, s.Fail(0, false))
		_, limit, _ := s.Failures("g")
		assert.Equal(t, 0, limit)
		_, _, ok := s.Failures("other")
		assert.False(t, ok)
	})
}
