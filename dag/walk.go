package dag

import (
	"context"
	"fmt"
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
//
// The order is a Scheduler's (lowest vertex number first); Walk only runs
// the calls it hands out, one goroutine each, and reports back.
func (g *Graph) Walk(ctx context.Context, parallelism int, fn func(ctx context.Context, id string) error) error {
	if len(g.cyclicComponents()) > 0 {
		return &CycleError{Cycles: g.Cycles()}
	}
	n := len(g.ids)
	b := NewBuilder(n)
	for v := range n {
		for _, d := range g.deps[v] {
			b.DependsOn(v, d)
		}
	}
	s := b.Build(Options{Parallelism: parallelism})
	type result struct {
		v   int
		err error
	}
	results := make(chan result, max(parallelism, 1))
	errs := make(map[int]error)
	for {
		for ctx.Err() == nil {
			v, ok := s.Next()
			if !ok {
				break
			}
			go func(v int) {
				results <- result{v, call(ctx, fn, g.ids[v])}
			}(v)
		}
		if s.Running() == 0 {
			break
		}
		r := <-results
		if r.err != nil {
			errs[r.v] = r.err
			s.Fail(r.v, false)
			continue
		}
		s.Succeed(r.v)
	}
	werr := &WalkError{}
	for v := range n {
		switch s.State(v) {
		case Failed:
			werr.Failed = append(werr.Failed, VertexError{ID: g.ids[v], Err: errs[v]})
		case Succeeded:
		default: // never started
			werr.Skipped = append(werr.Skipped, g.ids[v])
		}
	}
	if len(werr.Failed) == 0 && len(werr.Skipped) == 0 {
		return nil
	}
	if len(werr.Skipped) > 0 {
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
