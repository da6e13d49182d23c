package dag

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchedulerReportsEveryChange: OnChange sees each state change as it
// happens, the cascades included, and every call agrees with State.
func TestSchedulerReportsEveryChange(t *testing.T) {
	type change struct {
		v        int
		from, to State
	}
	// 0 → 1 → 2, and 3 needs an outside dependency that failed.
	b := NewBuilder(4)
	b.DependsOn(1, 0)
	b.DependsOn(2, 1)
	b.DependsOnOutside(3, OutsideFailed)
	var got []change
	var s *Scheduler
	s = b.Build(Options{Parallelism: 2, OnChange: func(v int, from, to State) {
		got = append(got, change{v, from, to})
		if s != nil {
			assert.Equal(t, to, s.State(v), "vertex %d", v)
		}
	}})
	assert.Equal(t, []change{{3, Pending, UpstreamFailed}, {0, Pending, Ready}}, got, "while building")

	got = nil
	v, ok := s.Next()
	require.True(t, ok)
	require.Equal(t, 0, v)
	s.Succeed(0)
	v, ok = s.Next()
	require.True(t, ok)
	require.Equal(t, 1, v)
	require.False(t, s.Fail(1, true), "held")
	s.Retry(1)
	_, _ = s.Next()
	s.Abandon(1)
	assert.Equal(t, []change{
		{0, Ready, Running}, {0, Running, Succeeded}, {1, Pending, Ready},
		{1, Ready, Running}, {1, Running, Held}, {1, Held, Ready}, {1, Ready, Running},
		{1, Running, Failed}, {2, Pending, UpstreamFailed},
	}, got)
}
