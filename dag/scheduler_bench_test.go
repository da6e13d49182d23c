package dag

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchPlan is a random 100k-vertex DAG with 200k edges, a few AnyOf
// groups and capped keys, as a large plan would be.
func benchPlan(n, m int) func() *Builder {
	rng := rand.New(rand.NewPCG(1, 2))
	type dep struct{ v, d int }
	deps := make([]dep, m)
	for k := range deps {
		v := 1 + rng.IntN(n-1)
		deps[k] = dep{v, rng.IntN(v)}
	}
	return func() *Builder {
		b := NewBuilder(n)
		for _, e := range deps {
			b.DependsOn(e.v, e.d)
		}
		for v := 100; v < n; v += 100 {
			b.DependsOnAny(v, []int{v - 1, v - 2, v - 3})
			b.Cap(v, "k", 2)
		}
		return b
	}
}

// drain runs every vertex, finishing the oldest running one first and
// failing one in a thousand.
func drain(b *testing.B, s *Scheduler) {
	queue := make([]int, 0, s.Len())
	for head := 0; ; head++ {
		for {
			v, ok := s.Next()
			if !ok {
				break
			}
			queue = append(queue, v)
		}
		if head == len(queue) {
			break
		}
		v := queue[head]
		if v%1000 == 999 {
			s.Fail(v, false)
		} else {
			s.Succeed(v)
		}
	}
	require.True(b, s.Finished(), "run did not finish")
}

func BenchmarkScheduler100k(b *testing.B) {
	build := benchPlan(100_000, 200_000)
	for b.Loop() {
		drain(b, build().Build(Options{Parallelism: 64}))
	}
}

func BenchmarkSchedulerPriority100k(b *testing.B) {
	build := benchPlan(100_000, 200_000)
	less := func(a, b int) bool { return a%97 < b%97 }
	for b.Loop() {
		drain(b, build().Build(Options{Parallelism: 64, Less: less}))
	}
}

func BenchmarkReverse100k(b *testing.B) {
	s := benchPlan(100_000, 200_000)().Build(Options{})
	subset := make([]int, 0, 50_000)
	for v := 0; v < 100_000; v += 2 {
		subset = append(subset, v)
	}
	recent := func(a, b int) bool { return a > b }
	for b.Loop() {
		r := s.Reverse(subset, 16, recent)
		for !r.Finished() {
			var out []int
			for {
				v, ok := r.Next()
				if !ok {
					break
				}
				out = append(out, v)
			}
			for _, v := range out {
				r.Done(v)
			}
		}
	}
}
