package workflows

import (
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// A unit's status, in the report and the progress query, is its
// scheduling state told in the API's words, with what the executor knows
// beyond it: a unit a compensation undid is rolled back, one whose
// activity was cancelled is cancelled, and once the run loop is over a
// unit never started is skipped.

// status is unit i's status.
func (e *Executor) status(i int) model.Status {
	st := &e.state[i]
	switch e.sched.State(i) {
	case dag.Running:
		return model.StatusRunning
	case dag.Held:
		return model.StatusWaiting
	case dag.Succeeded:
		if st.rolledBack {
			return model.StatusRolledBack
		}
		return model.StatusSucceeded
	case dag.Skipped:
		return model.StatusSkipped
	case dag.Failed:
		if st.cancelled {
			return model.StatusCanceled
		}
		return model.StatusFailed
	case dag.UpstreamFailed:
		return model.StatusDepFailed
	}
	if e.phase.loopOver() {
		return model.StatusSkipped
	}
	return model.StatusPending
}

// unitError is the error shown for unit i: its own, or for a unit that
// never ran, which dependency kept it from running.
func (e *Executor) unitError(i int) string {
	dep, ok := e.sched.Cause(i)
	switch {
	case !ok:
		return e.state[i].err
	case dep < 0:
		return "a dependency in an earlier shard failed"
	case e.sched.State(dep) == dag.UpstreamFailed:
		return "dependency " + e.units[dep].Step + " did not run"
	case e.state[dep].cancelled:
		return "cancelled"
	}
	return "dependency " + e.units[dep].Step + " failed"
}

// finished reports whether a unit or step of status s is over.
func finished(s model.Status) bool {
	switch s {
	case model.StatusPending, model.StatusRunning, model.StatusWaiting:
		return false
	}
	return true
}
