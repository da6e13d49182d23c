package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

const refreshPackage = `
kind: File
metadata: {name: conf}
spec: {path: /etc/app.conf, content: x}
notify: [Exec/restart]
---
kind: File
metadata: {name: unit}
spec: {path: /etc/app.service, content: x}
---
kind: Exec
metadata: {name: restart}
spec: {command: "true", refreshOnly: true}
subscribe: [File/unit]
`

func refreshPlan(t *testing.T, size int) *Plan {
	t.Helper()
	cat := kinds.Builtin()
	docs, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "t.yaml", Data: []byte(refreshPackage)})
	require.NoError(t, err)
	steps, err := graphs.BuildPackage(docs.Package, cat, nil)
	require.NoError(t, err)
	b := NewBuilder(contract.ModeApply)
	require.NoError(t, b.AddCurrent(steps, cat, nil))
	p, err := b.Plan(size)
	require.NoError(t, err)
	return p
}

// Subscriptions across units go to the executor in the subscriber's unit,
// with the sources' units, and each source unit names its sources; inside
// one unit they stay with the steps, for the activity.
func TestPlanCarriesSubscriptionsAcrossUnits(t *testing.T) {
	t.Run("one step per unit", func(t *testing.T) {
		p := refreshPlan(t, 1)
		require.Len(t, p.Units, 3)
		ids := map[string]int{}
		for _, u := range p.Units {
			ids[u.Step] = u.Index
		}
		restart := p.Units[ids["exec/restart"]]
		require.Len(t, restart.Subscriptions, 1)
		sub := restart.Subscriptions[0]
		assert.Equal(t, "exec/restart", sub.Step)
		assert.ElementsMatch(t, []contract.StepRef{
			{Unit: ids["file/conf"], Step: "file/conf"}, {Unit: ids["file/unit"], Step: "file/unit"},
		}, sub.From)
		assert.Equal(t, []string{"file/conf"}, p.Units[ids["file/conf"]].Sources)
		assert.Equal(t, []string{"file/unit"}, p.Units[ids["file/unit"]].Sources)
		assert.Empty(t, restart.Sources)
	})
	t.Run("one unit", func(t *testing.T) {
		p := refreshPlan(t, 100)
		require.Len(t, p.Units, 1)
		assert.Empty(t, p.Units[0].Subscriptions, "the activity settles them")
		assert.Empty(t, p.Units[0].Sources)
		last := p.Members[0][len(p.Members[0])-1]
		assert.Equal(t, "exec/restart", last.ID, "the subscriber runs after its sources")
		assert.ElementsMatch(t, []string{"file/conf", "file/unit"}, last.Subscribes)
	})
}

// A delete step keeps no subscriptions: what left the package is not
// refreshed.
func TestDeleteStepsSubscribeToNothing(t *testing.T) {
	p := refreshPlan(t, 1)
	old := &Previous{Catalogue: kinds.Builtin()}
	for _, s := range p.Order {
		old.Steps = append(old.Steps, &s.Step)
	}
	b := NewBuilder(contract.ModeApply)
	require.NoError(t, b.AddDeletes(recordOf(p), old, kinds.Builtin()))
	for _, s := range b.steps {
		assert.Empty(t, s.Subscribes, s.ID)
	}
}

// recordOf is the stack record a plan's steps would leave.
func recordOf(p *Plan) []model.StackResource {
	var out []model.StackResource
	for _, s := range p.Order {
		out = append(out, model.StackResource{Kind: s.RecordKind, ID: s.ID, PkgName: s.Name, Node: s.Node})
	}
	return out
}
