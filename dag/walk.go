package dag

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"
)

// VertexError is the failure of one vertex's function.
type VertexError struct {
	ID  string
	Err error
}

func (e VertexError) Error() string { return e.ID + ": " + e.Err.Error() }
func (e VertexError) Unwrap() error { return e.Err }

// WalkError reports an unfinished walk: the vertices whose function failed,
// the vertices never run (a dependency failed, or the context ended first),
// and the context's error when the walk was cut short.
type WalkError struct {
	Failed  []VertexError // in vertex insertion order
	Skipped []string      // in vertex insertion order
	Err     error         // the context's error if it ended the walk early
}

func (e *WalkError) Error() string {
	var parts []string
	if len(e.Failed) > 0 {
		msgs := make([]string, len(e.Failed))
		for i, f := range e.Failed {
			msgs[i] = f.Error()
		}
		parts = append(parts, fmt.Sprintf("%d failed (%s)", len(e.Failed), strings.Join(msgs, "; ")))
	}
	if len(e.Skipped) > 0 {
		parts = append(parts, fmt.Sprintf("%d not run (%s)", len(e.Skipped), strings.Join(e.Skipped, ", ")))
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return "walk: " + strings.Join(parts, "; ")
}

// Unwrap exposes each vertex error and the context error to errors.Is/As.
func (e *WalkError) Unwrap() []error {
	out := make([]error, 0, len(e.Failed)+1)
	for _, f := range e.Failed {
		out = append(out, f)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// Walk calls fn for every vertex, each as soon as all of its dependencies
// succeeded, with at most parallelism calls at once (less than 1 means 1).
// Ready vertices start in insertion order. A vertex whose dependency failed
// is not run; independent vertices still are. Walk returns nil when every
// call succeeded, a *CycleError before running anything if the graph has a
// cycle, and otherwise a *WalkError. When ctx ends no new call starts; calls
// already running receive ctx and are awaited. A panic in fn is returned as
// that vertex's error.
func (g *Graph) Walk(ctx context.Context, parallelism int, fn func(ctx context.Context, id string) error) error {
	if len(g.cyclicComponents()) > 0 {
		return &CycleError{Cycles: g.Cycles()}
	}
	if parallelism < 1 {
		parallelism = 1
	}
	n := len(g.ids)
	waiting := make([]int, n)
	ready := &minHeap{}
	for v := range n {
		waiting[v] = len(g.deps[v])
		if waiting[v] == 0 {
			ready.ints = append(ready.ints, v) // ascending: already a heap
		}
	}
	const (
		pending = iota
		started
	)
	state := make([]uint8, n)
	type result struct {
		v   int
		err error
	}
	results := make(chan result, parallelism)
	running := 0
	var failed []int
	errs := make(map[int]error)
	for {
		for running < parallelism && ready.Len() > 0 && ctx.Err() == nil {
			v := heap.Pop(ready).(int)
			state[v] = started
			running++
			go func(v int) {
				results <- result{v, call(ctx, fn, g.ids[v])}
			}(v)
		}
		if running == 0 {
			break
		}
		r := <-results
		running--
		if r.err != nil {
			failed = append(failed, r.v)
			errs[r.v] = r.err
			continue // its dependents never become ready
		}
		for _, w := range g.rdeps[r.v] {
			waiting[w]--
			if waiting[w] == 0 {
				heap.Push(ready, w)
			}
		}
	}
	var skipped []string
	for v := range n {
		if state[v] == pending {
			skipped = append(skipped, g.ids[v])
		}
	}
	if len(failed) == 0 && len(skipped) == 0 {
		return nil
	}
	slices.Sort(failed)
	werr := &WalkError{Skipped: skipped}
	for _, v := range failed {
		werr.Failed = append(werr.Failed, VertexError{ID: g.ids[v], Err: errs[v]})
	}
	if len(skipped) > 0 {
		werr.Err = ctx.Err()
	}
	return werr
}

func call(ctx context.Context, fn func(context.Context, string) error, id string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(ctx, id)
}

type minHeap struct{ ints []int }

func (h *minHeap) Len() int           { return len(h.ints) }
func (h *minHeap) Less(i, j int) bool { return h.ints[i] < h.ints[j] }
func (h *minHeap) Swap(i, j int)      { h.ints[i], h.ints[j] = h.ints[j], h.ints[i] }
func (h *minHeap) Push(x any)         { h.ints = append(h.ints, x.(int)) }
func (h *minHeap) Pop() any {
	x := h.ints[len(h.ints)-1]
	h.ints = h.ints[:len(h.ints)-1]
	return x
}
