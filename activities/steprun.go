package activities

import (
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/stepdata"
)

// stepRun is one step going through an activity.
type stepRun struct {
	step    *planner.StoredStep
	req     providers.Request
	secrets []string // secret values the spec uses, to redact
	missing expr.Missing
	// verbose is the execution's verbose option, for kinds that run
	// programs (set by resolve).
	verbose bool
	// prior is the before-state an earlier attempt recorded.
	prior *stepdata.Before
	plan  providers.Change
	res   contract.StepResult
	err   error
	done  bool
	// recalled marks a step an earlier attempt finished and recorded;
	// recorded one whose outcome this attempt has recorded.
	recalled, recorded bool
	// planned: read and diffed; beforeKept: its before-state is stored;
	// applied: its change was attempted.
	planned, beforeKept, applied bool
	// started is the start marker an earlier attempt left (see
	// unknown.go); marked says this attempt wrote one; unknown, that the
	// step's command may or may not have run and was not run again.
	started         *stepdata.Started
	marked, unknown bool
}

// outputs is what r leaves for the stack record and its dependents, with
// the secrets its spec used redacted: outputs are stored in clear.
func (r *stepRun) outputs() stepdata.Outputs {
	return stepdata.Outputs{ID: r.res.ObjectID, Outputs: r.redactedOutputs(), Action: r.res.Action, Outcome: r.res.Outcome, Deleted: r.step.Delete, Refreshed: r.res.Refreshed}
}

// redactedOutputs are the outputs of r's object (an exec's stdout that
// printed a secret it was given, an http body echoing one) with the
// secrets its spec used redacted in every string, nested ones included.
func (r *stepRun) redactedOutputs() map[string]any {
	if len(r.secrets) == 0 || r.plan.After.Outputs == nil {
		return r.plan.After.Outputs
	}
	out, _ := expr.RedactValue(r.plan.After.Outputs, r.secrets).(map[string]any)
	return out
}

// nothingToUndo reports whether a failed step left nothing for Compensate
// to undo: no before-state was recorded (it failed before changing
// anything), or it is a command, which failing did not complete.
func (r *stepRun) nothingToUndo() bool {
	if r.unknown {
		return false // the command may have run to its end
	}
	if r.prior == nil && !r.beforeKept {
		return true
	}
	action := r.plan.Action
	if r.prior != nil {
		action = r.prior.Action
	}
	return action == model.ActionRun
}

func (r *stepRun) fail(err error) {
	r.err = err
	r.res.Outcome = model.OutcomeFailed
	// The result names its step: the provider's own "kind/name: " prefix
	// would say it twice.
	msg := strings.TrimPrefix(err.Error(), strings.ToLower(r.req.Kind)+"/"+r.req.Name+": ")
	r.res.Error = expr.Redact(msg, r.secrets)
	r.done = true
}

func (r *stepRun) skip(why string) {
	r.res.Action, r.res.Outcome, r.res.Error = model.ActionNoop, model.OutcomeSkipped, ""
	r.res.Changes = []model.AttrChange{{Path: "skipped", New: why}}
	r.done = true
}

func (r *stepRun) redact(s string) string { return expr.Redact(s, r.secrets) }
