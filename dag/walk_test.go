package dag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder notes the order calls start and finish and the peak concurrency.
type recorder struct {
	mu       sync.Mutex
	started  []string
	finished map[string]int // id → finish sequence number
	seq      int
	running  atomic.Int32
	peak     atomic.Int32
}

func newRecorder() *recorder { return &recorder{finished: map[string]int{}} }

func (r *recorder) fn(fail map[string]error, hold time.Duration) func(context.Context, string) error {
	return func(ctx context.Context, id string) error {
		now := r.running.Add(1)
		for {
			p := r.peak.Load()
			if now <= p || r.peak.CompareAndSwap(p, now) {
				break
			}
		}
		r.mu.Lock()
		r.started = append(r.started, id)
		r.mu.Unlock()
		if hold > 0 {
			time.Sleep(hold)
		}
		r.running.Add(-1)
		r.mu.Lock()
		r.seq++
		r.finished[id] = r.seq
		r.mu.Unlock()
		return fail[id]
	}
}

func TestWalk(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name        string
		spec        []string
		parallelism int
		fail        map[string]error
		wantRun     []string // set of vertices whose fn ran
		wantFailed  []string
		wantSkipped []string
	}{
		{
			name: "all succeed", spec: []string{"d>b", "d>c", "b>a", "c>a"}, parallelism: 4,
			wantRun: []string{"a", "b", "c", "d"},
		},
		{
			name: "failure skips dependents transitively, independents still run",
			spec: []string{"b>a", "c>b", "x", "y>x"}, parallelism: 2, fail: map[string]error{"a": boom},
			wantRun: []string{"a", "x", "y"}, wantFailed: []string{"a"}, wantSkipped: []string{"b", "c"},
		},
		{
			name: "vertex with one failed and one good dependency is not run",
			spec: []string{"c>a", "c>b"}, parallelism: 1, fail: map[string]error{"b": boom},
			wantRun: []string{"a", "b"}, wantFailed: []string{"b"}, wantSkipped: []string{"c"},
		},
		{
			name: "two failures reported in insertion order",
			spec: []string{"p", "q", "r>q"}, parallelism: 3, fail: map[string]error{"q": boom, "p": boom},
			wantRun: []string{"p", "q"}, wantFailed: []string{"p", "q"}, wantSkipped: []string{"r"},
		},
		{
			name: "zero parallelism means one", spec: []string{"a", "b", "c"}, parallelism: 0,
			wantRun: []string{"a", "b", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.spec...)
			rec := newRecorder()
			err := g.Walk(context.Background(), tt.parallelism, rec.fn(tt.fail, time.Millisecond))
			ran := slices.Clone(rec.started)
			slices.Sort(ran)
			require.True(t, slices.Equal(ran, tt.wantRun), "ran %v, want %v", ran, tt.wantRun)
			// Every vertex started only after each dependency finished.
			for _, v := range rec.started {
				for _, d := range g.Deps(v) {
					_, ok := rec.finished[d]
					require.True(t, ok, "%s ran though dependency %s did not", v, d)
				}
			}
			if tt.wantFailed == nil && tt.wantSkipped == nil {
				require.NoError(t, err)
				return
			}
			var werr *WalkError
			require.ErrorAs(t, err, &werr, "err = %v, want *WalkError", err)
			var failed []string
			for _, f := range werr.Failed {
				failed = append(failed, f.ID)
			}
			require.True(t, slices.Equal(failed, tt.wantFailed), "failed %v skipped %v, want %v and %v", failed, werr.Skipped, tt.wantFailed, tt.wantSkipped)
			require.True(t, slices.Equal(werr.Skipped, tt.wantSkipped), "failed %v skipped %v, want %v and %v", failed, werr.Skipped, tt.wantFailed, tt.wantSkipped)
			require.ErrorIs(t, err, boom, "errors.Is(err, boom) = false: %v", err)
		})
	}
}

func TestWalkRespectsParallelism(t *testing.T) {
	for _, p := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			g := New()
			for i := range 20 {
				g.Add(fmt.Sprint(i))
			}
			rec := newRecorder()
			require.NoError(t, g.Walk(context.Background(), p, rec.fn(nil, 5*time.Millisecond)))
			peak := int(rec.peak.Load())
			require.LessOrEqual(t, peak, p, "peak concurrency %d with parallelism %d", peak, p)
			if p > 1 {
				require.GreaterOrEqual(t, peak, 2, "peak concurrency %d with parallelism %d", peak, p)
			}
		})
	}
}

func TestWalkStartsReadyVerticesInInsertionOrder(t *testing.T) {
	g := build("c", "a", "b", "z>a")
	rec := newRecorder()
	require.NoError(t, g.Walk(context.Background(), 1, rec.fn(nil, 0)))
	want := []string{"c", "a", "b", "z"}
	require.Equal(t, want, rec.started, "started")
}

func TestWalkRunsAsSoonAsDependenciesSucceed(t *testing.T) {
	// fast → after-fast must not wait for the slow, unrelated vertex.
	g := build("slow", "after-fast>fast")
	var mu sync.Mutex
	var order []string
	err := g.Walk(context.Background(), 2, func(ctx context.Context, id string) error {
		if id == "slow" {
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		order = append(order, id)
		mu.Unlock()
		return nil
	})
	require.NoError(t, err)
	want := []string{"fast", "after-fast", "slow"}
	require.True(t, slices.Equal(order, want), "finish order %v, want %v", order, want)
}

func TestWalkCancel(t *testing.T) {
	g := build("b>a", "c>b")
	ctx, cancel := context.WithCancel(context.Background())
	err := g.Walk(ctx, 1, func(ctx context.Context, id string) error {
		if id == "a" {
			cancel()
		}
		return nil
	})
	var werr *WalkError
	require.ErrorAs(t, err, &werr, "err = %#v", err)
	require.True(t, slices.Equal(werr.Skipped, []string{"b", "c"}), "err = %#v", err)
	require.Empty(t, werr.Failed, "err = %#v", err)
	require.ErrorIs(t, err, context.Canceled, "err %v does not wrap context.Canceled", err)
}

func TestWalkPanicIsAnError(t *testing.T) {
	g := build("b>a")
	err := g.Walk(context.Background(), 1, func(ctx context.Context, id string) error {
		if id == "a" {
			panic("kaput")
		}
		return nil
	})
	var werr *WalkError
	require.ErrorAs(t, err, &werr, "err = %v", err)
	require.Len(t, werr.Failed, 1, "err = %v", err)
	require.Equal(t, "a", werr.Failed[0].ID, "err = %v", err)
	require.Equal(t, "panic: kaput", werr.Failed[0].Err.Error(), "err = %v", err)
	require.True(t, slices.Equal(werr.Skipped, []string{"b"}), "err = %v", err)
}

func TestWalkRefusesCycles(t *testing.T) {
	g := build("a>b", "b>a", "c")
	ran := false
	err := g.Walk(context.Background(), 2, func(ctx context.Context, id string) error { ran = true; return nil })
	var ce *CycleError
	require.ErrorAs(t, err, &ce, "err = %v, ran = %v", err, ran)
	require.False(t, ran, "err = %v, ran = %v", err, ran)
}

func BenchmarkWalk100k(b *testing.B) {
	g := randomDAG(100_000, 200_000, 1)
	for b.Loop() {
		require.NoError(b, g.Walk(context.Background(), 8, func(context.Context, string) error { return nil }))
	}
}
