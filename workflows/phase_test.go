package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPhaseTransitions checks every phase against every event: the
// transitions phase.go draws are taken, and nothing else is.
func TestPhaseTransitions(t *testing.T) {
	want := map[phase]map[event]phase{
		phaseRunning: {
			evHeld: phasePaused, evStop: phaseDraining, evRollback: phaseDrainingToRollback,
			evDrained: phaseDone, evUndoAll: phaseCompensating,
		},
		phasePaused: {
			evHeld: phasePaused, evAnswered: phaseRunning, evStop: phaseDraining, evRollback: phaseDrainingToRollback,
		},
		phaseDraining: {
			evStop: phaseDraining, evRollback: phaseDrainingToRollback, evDrained: phaseDone,
		},
		phaseDrainingToRollback: {
			evStop: phaseDrainingToRollback, evRollback: phaseDrainingToRollback, evDrained: phaseCompensating,
		},
		phaseCompensating: {
			evUndone: phaseRolledBack, evNothingToUndo: phaseDone,
		},
		phaseDone:       {},
		phaseRolledBack: {},
	}
	for p := phaseRunning; p <= phaseRolledBack; p++ {
		for ev := evHeld; ev <= evNothingToUndo; ev++ {
			got, ok := p.on(ev)
			next, allowed := want[p][ev]
			assert.Equal(t, allowed, ok, "%s on %s", p, ev)
			if allowed {
				assert.Equal(t, next, got, "%s on %s", p, ev)
			} else {
				assert.Equal(t, p, got, "%s on %s stays", p, ev)
			}
		}
	}
}

// TestPhaseRefusesAnImpossibleTransition checks that the executor does
// not go on in a phase it cannot be in: a paused run cannot be drained.
func TestPhaseRefusesAnImpossibleTransition(t *testing.T) {
	e := &Executor{phase: phasePaused}
	assert.PanicsWithValue(t, "executor: paused does not take drained", func() { e.to(evDrained) })
	e = &Executor{}
	e.to(evHeld)
	e.to(evAnswered)
	e.to(evRollback)
	e.to(evDrained)
	e.to(evUndone)
	assert.Equal(t, phaseRolledBack, e.phase)
	assert.True(t, e.phase.loopOver())
	assert.False(t, e.phase.drains())
}
