package workflows

import "fmt"

// phase is where an executor's run stands. The scheduler owns every
// unit's state; the phase owns the run's: whether units may start, whether
// the run ends by compensating, and whether it is over. It changes only
// through phase.on, which holds every transition:
//
//	running  --held-->      paused       a failed unit waits for a decision
//	paused   --held-->      paused       another one does too
//	paused   --answered-->  running      no unit waits any more (retry, skip)
//	running, paused, draining --stop--> draining
//	                                     OnFailure stop or pause, an abort,
//	                                     a cancellation that only stops
//	running, paused, draining, drainingToRollback --rollback--> drainingToRollback
//	                                     OnFailure rollback, a rollback
//	                                     decision, the cancellation of an apply
//	drainingToRollback --stop-->  drainingToRollback
//	running, draining --drained--> done  nothing runs or waits any more
//	drainingToRollback --drained--> compensating
//	running --undoAll--> compensating    CompensateAll: an earlier run's
//	                                     changes are undone
//	compensating --undone--> rolledBack  compensations ran
//	compensating --nothingToUndo--> done nothing had changed
//
// So a run that starts nothing new is draining, a rollback always follows
// a drain, and only a finished run is done or rolled back: the states the
// former flags could combine into (stopped yet still starting units, a
// rollback pending without stopping) cannot be written down.
type phase uint8

const (
	// phaseRunning starts units as the scheduler hands them out.
	phaseRunning phase = iota
	// phasePaused starts nothing while failed units wait for decisions.
	phasePaused
	// phaseDraining starts nothing more: the units in flight finish,
	// then the run is done.
	phaseDraining
	// phaseDrainingToRollback drains too, then compensates.
	phaseDrainingToRollback
	// phaseCompensating undoes the run's done changes.
	phaseCompensating
	// phaseDone is a run over without compensations.
	phaseDone
	// phaseRolledBack is a run over whose changes compensations undid.
	phaseRolledBack
)

func (p phase) String() string {
	switch p {
	case phaseRunning:
		return "running"
	case phasePaused:
		return "paused"
	case phaseDraining:
		return "draining"
	case phaseDrainingToRollback:
		return "draining to roll back"
	case phaseCompensating:
		return "compensating"
	case phaseDone:
		return "done"
	case phaseRolledBack:
		return "rolled back"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// event is what moves a run from one phase to the next.
type event uint8

const (
	evHeld          event = iota // a failed unit waits for a decision
	evAnswered                   // no unit waits for a decision any more
	evStop                       // start nothing more
	evRollback                   // start nothing more; compensate once drained
	evDrained                    // nothing runs or waits: the run loop is over
	evUndoAll                    // undo every unit (CompensateAll)
	evUndone                     // compensations ran
	evNothingToUndo              // no unit had anything to compensate
)

func (ev event) String() string {
	switch ev {
	case evHeld:
		return "held"
	case evAnswered:
		return "answered"
	case evStop:
		return "stop"
	case evRollback:
		return "rollback"
	case evDrained:
		return "drained"
	case evUndoAll:
		return "undoAll"
	case evUndone:
		return "undone"
	case evNothingToUndo:
		return "nothingToUndo"
	}
	return fmt.Sprintf("event(%d)", uint8(ev))
}

// on is the phase ev moves p to, and false when p does not take ev (a
// bug in the executor).
func (p phase) on(ev event) (phase, bool) {
	switch ev {
	case evHeld:
		if p == phaseRunning || p == phasePaused {
			return phasePaused, true
		}
	case evAnswered:
		if p == phasePaused {
			return phaseRunning, true
		}
	case evStop:
		switch p {
		case phaseRunning, phasePaused, phaseDraining:
			return phaseDraining, true
		case phaseDrainingToRollback:
			return p, true
		}
	case evRollback:
		if p.drains() || p == phaseRunning || p == phasePaused {
			return phaseDrainingToRollback, true
		}
	case evDrained:
		switch p {
		case phaseRunning, phaseDraining:
			return phaseDone, true
		case phaseDrainingToRollback:
			return phaseCompensating, true
		}
	case evUndoAll:
		if p == phaseRunning {
			return phaseCompensating, true
		}
	case evUndone:
		if p == phaseCompensating {
			return phaseRolledBack, true
		}
	case evNothingToUndo:
		if p == phaseCompensating {
			return phaseDone, true
		}
	}
	return p, false
}

// drains reports whether the run starts nothing more but still has units
// in flight or waiting to be taken in.
func (p phase) drains() bool { return p == phaseDraining || p == phaseDrainingToRollback }

// loopOver reports whether the run loop is over: units never started
// stay so (and count as skipped).
func (p phase) loopOver() bool { return p >= phaseCompensating }

// to moves the run on ev. A phase that does not take ev is a bug in the
// executor: the workflow task fails (and is retried once fixed) rather
// than the run going on in a state it cannot be in.
func (e *Executor) to(ev event) {
	next, ok := e.phase.on(ev)
	if !ok {
		panic(fmt.Sprintf("executor: %s does not take %s", e.phase, ev))
	}
	over := !e.phase.loopOver() && next.loopOver()
	e.phase = next
	if over {
		e.touchUnstarted() // they show skipped from now on
	}
}

// halt says why a run stopped, for its report: the first failure's
// message (or the cancellation's), whether an operator aborted it and
// whether the workflow was cancelled. Both may hold: a cancellation can
// come while an aborted run drains.
type halt struct {
	cause     string
	aborted   bool
	cancelled bool
}
