package activities

import (
	"context"
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/stepdata"
)

// A command that is not safe to repeat (providers.Registry.RepeatUnsafe,
// and not declared idempotent) has a start marker (stepdata.Started) in
// the store before it runs; its outputs record, written once it ran, is
// its outcome. A later attempt of the same activity — a retry after the
// worker died, or a handover — that finds the marker without an outcome
// cannot tell whether the command ran: it does not run it again but
// reports the step unknown, and the executor pauses it for a decision.
// Retry runs it again knowingly (another activity, so the marker is not
// its own); skip takes it as done.

// startedBy names the running activity for start markers: its workflow
// run and activity id, the same on every attempt and handover, another
// for an operator's retry. "" outside an activity.
func startedBy(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	info := activity.GetInfo(ctx)
	return info.WorkflowExecution.RunID + "/" + info.ActivityID
}

// repeatUnsafe reports whether r is about to run a command that must not
// run twice without a decision: its kind says so for its spec (no guard,
// no test_pre) and the step is not declared idempotent.
func (a *Activities) repeatUnsafe(r *stepRun) bool {
	return !r.step.Meta.Idempotent && a.d.Registry.RepeatUnsafe(r.req)
}

// markStarted keeps r's start marker: one store write, made durable
// before the command runs (a batch of one: on SQLite it shares its commit
// with the writes of other units that arrive together).
func (a *Activities) markStarted(ctx context.Context, execID string, r *stepRun) error {
	raw, err := json.Marshal(stepdata.Started{By: startedBy(ctx)})
	if err != nil {
		return err
	}
	if err := a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataStarted, map[string][]byte{r.step.ID: raw}); err != nil {
		return err
	}
	r.marked = true
	return nil
}

// endStarted marks the commands of runs that failed with a known outcome
// (a non-zero exit, a timeout) as ended, so a retry of the failure runs
// them again; their outputs are not recorded. One store write, only when
// a marked command failed.
func (a *Activities) endStarted(ctx context.Context, execID string, runs []*stepRun) error {
	ended := map[string][]byte{}
	for _, r := range runs {
		if !r.marked || r.res.Outcome != model.OutcomeFailed {
			continue
		}
		raw, err := json.Marshal(stepdata.Started{By: startedBy(ctx), Ended: true})
		if err != nil {
			return err
		}
		ended[r.step.ID] = raw
	}
	return a.d.Steps.PutStepDataBatch(ctx, execID, contract.DataStarted, ended)
}

// recallStarted loads r's start marker, if an earlier attempt left one.
func (a *Activities) recallStarted(ctx context.Context, execID string, r *stepRun) error {
	var started stepdata.Started
	err := a.loadJSON(ctx, execID, r.step.ID, contract.DataStarted, &started)
	switch {
	case err == nil:
		r.started = &started
	case !notFound(err):
		return err
	}
	return nil
}

// settleUnknown settles the steps whose command an earlier attempt
// started without recording its outcome: one the operator skipped is done
// (the decision "skip" takes it as having run); one this same activity
// started is unknown and does not run. A step another activity started
// (an operator's retry) runs again. holds is the executor's
// contract.UnitInput.HoldsUnknown.
func (u *unitRun) settleUnknown(by string, skipped []string, holds bool) {
	for _, r := range u.runs {
		if r.done || r.started == nil || r.started.Ended {
			continue
		}
		switch {
		case slices.Contains(skipped, r.step.ID):
			r.res.Action, r.res.Outcome, r.res.Error = model.ActionRun, stepdata.OutcomeOf(model.ActionRun), ""
			r.res.Changes = []model.AttrChange{{Path: "skipped", New: "taken as done by operator: its outcome was unknown"}}
			r.done = true
		case by != "" && r.started.By == by:
			r.unknown = true
			r.res.Action, r.res.Error = model.ActionRun, model.UnknownMessage
			r.res.Outcome = model.OutcomeUnknown
			if !holds {
				r.res.Outcome = model.OutcomeFailed
			}
			r.done = true
		}
	}
}
