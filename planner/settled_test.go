package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A unit is settled when every step in it is known to be skipped before it
// runs, and says why.
func TestSettledUnits(t *testing.T) {
	skipped := func(s *StoredStep) *StoredStep { s.Skipped = true; return s }
	cond := func(c string, s *StoredStep) *StoredStep { s.Condition = c; return s }
	tests := []struct {
		name  string
		steps []*StoredStep
		want  string
	}{
		{"not selected", []*StoredStep{skipped(step("a", "n1"))}, NotSelected},
		{"condition false", []*StoredStep{cond(" false ", step("a", "n1"))}, ConditionIsFalse},
		{"both", []*StoredStep{skipped(step("a", "n1")), cond("false", step("b", "n1"))}, NotSelected + " or " + ConditionIsFalse},
		{"one step runs", []*StoredStep{skipped(step("a", "n1")), step("b", "n1")}, ""},
		{"condition decided when it runs", []*StoredStep{cond("{{ false }}", step("a", "n1"))}, ""},
		{"condition true", []*StoredStep{cond("true", step("a", "n1"))}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(t, tt.steps, 10)
			if assert.Len(t, p.Units, 1) {
				assert.Equal(t, tt.want, p.Units[0].Settled)
			}
		})
	}
}

// A plan too large for its units to name their steps still names those of
// settled units: no activity reports them, so only the ids list them.
func TestSettledUnitsNameTheirStepsInLargePlans(t *testing.T) {
	steps := flat(MaxNamedSteps)
	for _, name := range []string{"s1", "s2"} {
		s := step(name, "n1")
		s.Skipped = true
		steps = append(steps, s)
	}
	p := plan(t, steps, 100)
	for _, u := range p.Units {
		if u.Settled != "" {
			assert.Equal(t, []string{"file/s1@n1", "file/s2@n1"}, u.Steps)
			continue
		}
		assert.Empty(t, u.Steps, "unit %d", u.Index)
	}
}
