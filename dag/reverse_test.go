package dag

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reverseStep is a call on a Reverse: "next" expects v (-1: none), "done"
// reports v finished.
type reverseStep struct {
	op string
	v  int
}

func TestReverse(t *testing.T) {
	rn := func(v int) reverseStep { return reverseStep{"next", v} }
	rd := func(v int) reverseStep { return reverseStep{"done", v} }
	tests := []struct {
		name        string
		n           int
		build       func(b *Builder)
		subset      []int
		seq         []int // completion order per vertex; most recent goes first
		parallelism int
		steps       []reverseStep
		finished    bool
	}{
		{
			name: "a chain comes back in reverse", n: 3,
			build:  func(b *Builder) { b.DependsOn(1, 0); b.DependsOn(2, 1) },
			subset: []int{0, 1, 2}, seq: []int{1, 2, 3}, parallelism: 3,
			steps:    []reverseStep{rn(2), rn(-1), rd(2), rn(1), rn(-1), rd(1), rn(0), rd(0)},
			finished: true,
		},
		{
			name: "a dependent outside the subset still orders its ends", n: 3,
			// 2 depends on 1 depends on 0; 1 changed nothing. 0 completed
			// last (an odd but possible recency) and still waits for 2.
			build:  func(b *Builder) { b.DependsOn(1, 0); b.DependsOn(2, 1) },
			subset: []int{0, 2}, seq: []int{9, 0, 3}, parallelism: 2,
			steps:    []reverseStep{rn(2), rn(-1), rd(2), rn(0), rd(0)},
			finished: true,
		},
		{
			name: "most recently completed first among the free ones", n: 4,
			// 3 depends on 1 and 2, which depend on 0; 1 completed after 2.
			build:  func(b *Builder) { b.DependsOn(1, 0); b.DependsOn(2, 0); b.DependsOn(3, 1, 2) },
			subset: []int{0, 1, 2, 3}, seq: []int{1, 3, 2, 4}, parallelism: 1,
			steps:    []reverseStep{rn(3), rn(-1), rd(3), rn(1), rn(-1), rd(1), rn(2), rd(2), rn(0), rd(0)},
			finished: true,
		},
		{
			name: "parallelism bounds what is out", n: 4,
			subset: []int{0, 1, 2, 3}, seq: []int{1, 2, 3, 4}, parallelism: 2,
			steps: []reverseStep{rn(3), rn(2), rn(-1), rd(2), rn(1), rn(-1), rd(3), rd(1), rn(0)},
		},
		{
			name: "AnyOf members wait for their dependents too", n: 3,
			build:  func(b *Builder) { b.DependsOnAny(2, []int{0, 1}) },
			subset: []int{0, 1, 2}, seq: []int{2, 1, 3}, parallelism: 3,
			steps: []reverseStep{rn(2), rn(-1), rd(2), rn(0), rn(1)},
		},
		{
			name: "vertices outside the subset never come out", n: 4,
			build:  func(b *Builder) { b.DependsOn(1, 0); b.DependsOn(3, 2) },
			subset: []int{1, 2, 2}, seq: []int{1, 2, 3, 4}, parallelism: 4,
			steps:    []reverseStep{rn(2), rn(1), rn(-1), rd(1), rd(2), rn(-1)},
			finished: true,
		},
		{
			name: "an empty subset is finished at once", n: 2,
			build:    func(b *Builder) { b.DependsOn(1, 0) },
			steps:    []reverseStep{rn(-1)},
			finished: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuilder(tt.n)
			if tt.build != nil {
				tt.build(b)
			}
			s := b.Build(Options{})
			var less func(a, b int) bool
			if tt.seq != nil {
				less = func(a, b int) bool { return tt.seq[a] > tt.seq[b] }
			}
			r := s.Reverse(tt.subset, tt.parallelism, less)
			for k, st := range tt.steps {
				switch st.op {
				case "next":
					v, ok := r.Next()
					if st.v < 0 {
						require.False(t, ok, "step %d: got %d", k, v)
						continue
					}
					require.True(t, ok, "step %d", k)
					require.Equal(t, st.v, v, "step %d", k)
				case "done":
					r.Done(st.v)
				}
			}
			assert.Equal(t, tt.finished, r.Finished())
		})
	}
}

func TestReverseFinishes(t *testing.T) {
	b := NewBuilder(3)
	b.DependsOn(2, 0, 1)
	r := b.Build(Options{}).Reverse([]int{0, 2}, 1, nil)
	var order []int
	for !r.Finished() {
		v, ok := r.Next()
		require.True(t, ok)
		order = append(order, v)
		r.Done(v)
	}
	assert.Equal(t, []int{2, 0}, order)
	assert.Zero(t, r.Running())
}
