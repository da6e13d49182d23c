package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/model"
)

// While it runs, an execution answers the "progress" query with every
// step's status, page by page, and keeps the one-line current details the
// Temporal UI shows up to date.

// A query answer stays below the SDK's payload warning (512 KB), whatever
// the fleet: at most MaxProgressSteps entries and about maxProgressBytes;
// the caller pages on with offset. A page of 1 MiB was 775 KB by the end of
// 200 nodes × 20 steps, uploaded on every poll of the execution.
const (
	MaxProgressSteps = 5000
	maxProgressBytes = 256 << 10
)

// MaxProgressBytes is about the most a progress answer holds, in bytes of
// JSON (ApproxStepSize), for callers that merge several answers into one.
const MaxProgressBytes = maxProgressBytes

// ApproxStepSize estimates the JSON size of a progress entry.
func ApproxStepSize(sp *model.StepProgress) int { return approxSize(sp) }

// approxSize estimates the JSON size of a progress entry.
func approxSize(sp *model.StepProgress) int {
	n := 200 + len(sp.ID) + len(sp.Error) + len(sp.Note)
	for _, c := range sp.Changes {
		n += 40 + len(c.Path) + len(fmt.Sprint(c.Old)) + len(fmt.Sprint(c.New))
	}
	return n
}

// Progress lists every step's status from offset, at most limit entries
// (0 = as many as fit). A unit of several steps that has not reported yet
// lists the steps it names, or is one entry.
func (e *Executor) Progress(offset, limit int) *model.ProgressPage {
	if limit <= 0 || limit > MaxProgressSteps {
		limit = MaxProgressSteps
	}
	p := e.progressHead()
	p.Offset = offset
	entry, size := 0, 0
	add := func(sp model.StepProgress) {
		if entry >= offset && len(p.Steps) < limit && size < maxProgressBytes {
			p.Steps = append(p.Steps, sp)
			size += approxSize(&sp)
		}
		entry++
	}
	for i := range e.units {
		e.unitEntries(i, add)
	}
	p.Entries = entry
	return p
}

// progressHead is a progress answer without steps: the execution's
// status, what runs and waits, and the step counts. Cost: O(units).
func (e *Executor) progressHead() *model.ProgressPage {
	p := &model.ProgressPage{ExecutionID: e.opts.ExecutionID, Status: model.ExecRunning, Steps: []model.StepProgress{}, Version: e.version}
	if e.sched.Count(dag.Held) > 0 {
		p.Status, p.Awaiting = model.ExecWaiting, AwaitingDecision
	}
	if e.final != nil {
		p.Status = e.final.Status()
		p.Report = &e.final.Report
	}
	p.Running = e.sched.Running()
	for _, i := range e.sched.Held() {
		p.Waiting = append(p.Waiting, e.waitingStep(i))
	}
	for i := range e.units {
		n := max(e.units[i].Count, 1)
		p.Total += n
		if finished(e.status(i)) {
			p.Done += n
		}
	}
	return p
}

// unitEntries passes unit i's step entries to add.
func (e *Executor) unitEntries(i int, add func(model.StepProgress)) {
	u := &e.units[i]
	st := &e.state[i]
	status := e.status(i)
	base := model.StepProgress{
		Kind: u.Kind, Node: u.Node, Status: status, Attempts: st.attempts,
		Error: e.unitError(i), StartedAt: st.startedAt, EndedAt: st.endedAt,
		Noop: e.opts.Mode == contract.ModeDryRun || u.Meta.Noop,
	}
	e.stepEntries(i, status, base, add)
}

// stepEntries lists unit i's steps: each with its own result once the
// unit reported, in the unit's order when the unit names its steps (a step
// the unit's last run did not reach shows the unit's status while it runs,
// skipped after); before the unit reported, each named step with the
// unit's status, or one entry for a unit that does not name them.
func (e *Executor) stepEntries(i int, status model.Status, base model.StepProgress, add func(model.StepProgress)) {
	u := &e.units[i]
	st := &e.state[i]
	entry := func(id string) model.StepProgress {
		sp := base
		sp.ID, sp.Name = id, stepName(id)
		return sp
	}
	fromResult := func(r *contract.StepResult) model.StepProgress {
		sp := entry(r.StepID)
		sp.Action, sp.Changes, sp.Error, sp.Note = r.Action, r.Changes, r.Error, r.Note
		sp.Status = e.stepStatus(i, status, *r)
		if r.Blocked != "" {
			sp.Error = "dependency " + r.Blocked + " failed"
		}
		return sp
	}
	switch {
	case len(st.results) > 0 && len(u.Steps) > 0:
		byID := make(map[string]int, len(st.results))
		for k := range st.results {
			byID[st.results[k].StepID] = k
		}
		for _, id := range u.Steps {
			k, ok := byID[id]
			if ok {
				add(fromResult(&st.results[k]))
				delete(byID, id)
				continue
			}
			sp := entry(id)
			if finished(status) {
				sp.Status, sp.Error = model.StatusSkipped, "not run"
			}
			add(sp)
		}
		for k := range st.results {
			if _, left := byID[st.results[k].StepID]; left {
				add(fromResult(&st.results[k]))
			}
		}
	case len(st.results) > 0:
		for k := range st.results {
			add(fromResult(&st.results[k]))
		}
	case len(u.Steps) > 0:
		for _, id := range u.Steps {
			add(entry(id))
		}
	default:
		sp := entry(u.Step)
		if u.Count > 1 {
			sp.ID = fmt.Sprintf("%s (+%d more)", u.Step, u.Count-1)
		}
		add(sp)
	}
}

// stepStatus is the status of one step of unit i, whose status is unit,
// from the step's result in the unit's last run: a unit of several steps
// may have failed in one step, after others succeeded, and kept others
// from running.
func (e *Executor) stepStatus(i int, unit model.Status, r contract.StepResult) model.Status {
	switch {
	case r.Blocked != "":
		return model.StatusDepFailed // a step of the unit failed first
	case unit == model.StatusRunning || unit == model.StatusPending:
		return unit // running again, or about to: the results are the last run's
	case e.state[i].undone[r.StepID]:
		return model.StatusRolledBack
	case r.Outcome == model.OutcomeUnknown:
		return model.StatusUnknown // waiting for a decision, or left so
	case r.Outcome == model.OutcomeFailed:
		switch unit {
		case model.StatusWaiting, model.StatusSkipped:
			return unit // awaiting a decision; fail_on_error false or skipped by one
		}
		return model.StatusFailed
	case r.Outcome == model.OutcomeSkipped:
		return model.StatusSkipped
	}
	return model.StatusSucceeded
}

// stepName is the name part of "kind/name@node" or "task@node".
func stepName(id string) string {
	if _, after, ok := strings.Cut(id, "/"); ok {
		id = after
	}
	name, _, _ := strings.Cut(id, "@")
	return name
}

// updateDetails keeps the UI's current details line up to date.
func (e *Executor) updateDetails(ctx workflow.Context) {
	total, done := 0, 0
	for i := range e.units {
		n := max(e.units[i].Count, 1)
		total += n
		if finished(e.status(i)) {
			done += n
		}
	}
	line := fmt.Sprintf("%d/%d steps done", done, total)
	if n := e.sched.Running(); n > 0 {
		line += fmt.Sprintf(", %d running", n)
	}
	if held := e.sched.Held(); len(held) > 0 {
		var names []string
		for _, i := range held {
			names = append(names, e.waitingLabel(i))
		}
		line += "; waiting for decision on " + strings.Join(names, ", ")
	}
	if e.halt.cause != "" {
		line += "; failed: " + e.halt.cause
	}
	if e.phase == phaseRolledBack {
		line += "; rolled back"
	}
	workflow.SetCurrentDetails(ctx, line)
}
