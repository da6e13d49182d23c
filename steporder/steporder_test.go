package steporder

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

func step(id string, deps ...string) *planner.StoredStep {
	return &planner.StoredStep{Step: model.Step{ID: id, Deps: deps}}
}

// ready drains the steps ready now.
func ready(u *Unit) []int {
	var out []int
	for {
		i, ok := u.Next()
		if !ok {
			return out
		}
		out = append(out, i)
	}
}

// Steps run after their dependencies in the unit (one outside the unit
// is not waited for); a failure cuts off its dependents, each blamed on
// the failed step at the root, and skipped counts as done.
func TestUnitWalksInDependencyOrder(t *testing.T) {
	u := New([]*planner.StoredStep{
		step("a", "elsewhere"), step("b", "a"), step("c", "b"), step("d"), step("e", "d"),
	})
	i, ok := u.Index("c")
	require.True(t, ok)
	assert.Equal(t, 2, i)
	_, ok = u.Index("elsewhere")
	assert.False(t, ok)

	assert.ElementsMatch(t, []int{0, 3}, ready(u))
	u.Fail(0)
	u.Skip(3)
	assert.Equal(t, []int{4}, ready(u), "a skipped step's dependents run")
	u.Succeed(4)
	assert.Empty(t, ready(u))
	assert.Equal(t, map[int]int{1: 0, 2: 0}, u.Blocked(), "c is cut off by a, through b")
}

// A step is planned ahead when accepted and all its dependencies in the
// unit are too.
func TestUnitAhead(t *testing.T) {
	u := New([]*planner.StoredStep{step("cmd"), step("after", "cmd"), step("file"), step("in", "file")})
	ahead := u.Ahead(func(i int) bool { return i != 0 })
	assert.Equal(t, []int{2, 3}, ahead)
}
