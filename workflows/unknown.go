package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A step whose outcome is unknown — its command started, its worker died
// before the outcome was recorded, and it is not safe to repeat — is
// reported with outcome unknown (see activities/unknown.go). Its unit
// waits for a decision whatever OnFailure, fail_on_error and its group's
// fault tolerance say: retry runs the command again, skip takes it as
// done (the unit runs again and records it so), rollback and abort stop
// the run. While the run drains (it stops for another reason), nothing
// would run the step again: it fails, its outcome still unknown.

// unknownOutcomeChange is the version change that introduced holding
// units with an unknown step: a history in which an older build took in
// such a result (as a success) replays as it ran.
const unknownOutcomeChange = "cairn-unknown-outcome"

// holdUnknown takes in unit i when its results hold a step whose outcome
// is unknown, and reports whether it did. Cost: a version marker, the
// first time only.
func (e *Executor) holdUnknown(ctx workflow.Context, i int) bool {
	id, ok := unknownStep(e.state[i].results)
	if !ok {
		return false
	}
	if workflow.GetVersion(ctx, unknownOutcomeChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	st := &e.state[i]
	st.err = stepError(id, model.UnknownMessage)
	if e.phase.drains() {
		e.sched.Abandon(i)
		e.failed(i, st.err)
		return true
	}
	e.sched.Hold(i)
	e.to(evHeld)
	return true
}

// unknownStep returns the first step of results whose outcome is unknown.
func unknownStep(results []contract.StepResult) (string, bool) {
	for _, r := range results {
		if r.Outcome == model.OutcomeUnknown {
			return r.StepID, true
		}
	}
	return "", false
}

// unknownSummary is the Temporal UI's summary of the activity that runs a
// unit again after a decision on step id, whose outcome was unknown: skip
// takes it as done, retry runs it again.
func unknownSummary(summary, id string, skip []string) string {
	if slices.Contains(skip, id) {
		return summary + " (" + id + " taken as done: its outcome was unknown)"
	}
	return summary + " (" + id + " run again: its outcome was unknown)"
}

// waitingLabel is how the current details name waiting unit i: its
// waiting step, saying so when that step's outcome is unknown.
func (e *Executor) waitingLabel(i int) string {
	if id, ok := unknownStep(e.state[i].results); ok {
		return id + " (unknown: the command may or may not have run)"
	}
	return e.waitingStep(i)
}
