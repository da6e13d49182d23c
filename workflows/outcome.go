package workflows

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/model"
)

// When the run is over the executor sums it up in an Outcome: the report
// (each step's outcome, the failures, the compensations that failed), how
// it ended, and the error the workflow fails with, if any.

// Outcome is what an executor run leaves: the report and how it ended.
type Outcome struct {
	Report         model.Report  `json:"report"`
	Plan           model.Summary `json:"plan"`
	Failed         bool          `json:"failed"`
	Cause          string        `json:"cause,omitempty"`
	RolledBack     bool          `json:"rolledBack,omitempty"`
	Cancelled      bool          `json:"cancelled,omitempty"`
	Aborted        bool          `json:"aborted,omitempty"`
	MissingEnv     []string      `json:"missingEnv,omitempty"`
	MissingSecrets []string      `json:"missingSecrets,omitempty"`
	// FailedUnits are the global indexes of units that did not succeed, so
	// later shards can fail their dependents.
	FailedUnits []int `json:"failedUnits,omitempty"`
	// Notified are the steps that changed (in a dry-run: would) and
	// refresh steps of other units (contract.Unit.Sources), so later
	// shards can refresh them.
	Notified []string `json:"notified,omitempty"`
	// Tolerated lists the failures (also in Report.Failures) that stayed
	// within their group's fault tolerance and so did not fail the run.
	Tolerated []model.StepError `json:"tolerated,omitempty"`
	// Recreated maps step ids to the new ids of objects a compensation
	// created again (an http object deleted by the run comes back under a
	// new id), which the stack record must name.
	Recreated map[string]string `json:"recreated,omitempty"`
	// Version is a shard's final change counter (see changes.go), so its
	// parent can tell followers there is nothing more to ask the shard.
	Version int64 `json:"version,omitempty"`
	// Entries is a shard's final count of progress entries, so its parent
	// can say where each shard's steps sit in the execution's list without
	// anyone querying (replaying) the closed shard.
	Entries int `json:"entries,omitempty"`
}

// Error types of failed executions; the report rides as details.
const (
	ErrFailed     = "ExecutionFailed"
	ErrRolledBack = "RolledBack"
)

// outcome builds the report once the run is over.
func (e *Executor) outcome() *Outcome {
	rolledBack := e.phase == phaseRolledBack
	o := &Outcome{Cause: e.halt.cause, Cancelled: e.halt.cancelled, Aborted: e.halt.aborted, RolledBack: rolledBack, Recreated: e.recreated}
	env, secrets := map[string]bool{}, map[string]bool{}
	tolerated := 0 // failed steps within their group's tolerance
	for i := range e.units {
		u := &e.units[i]
		st := &e.state[i]
		status := e.status(i)
		switch status {
		case model.StatusSucceeded, model.StatusRolledBack:
		case model.StatusSkipped:
		default:
			o.FailedUnits = append(o.FailedUnits, u.Index)
		}
		if len(st.results) > 0 {
			for _, r := range st.results {
				outcome := r.Outcome
				if status == model.StatusSkipped && outcome == model.OutcomeFailed {
					outcome = model.OutcomeSkipped // fail_on_error: false
				}
				o.Report.Count(outcome)
				if outcome == model.OutcomeFailed || outcome == model.OutcomeUnknown {
					f := model.StepError{Step: r.StepID, Error: r.Error}
					o.Report.Failures = append(o.Report.Failures, f)
					if st.tolerated {
						o.Tolerated = append(o.Tolerated, f)
						tolerated++
					}
				}
				if r.Action != "" && outcome != model.OutcomeFailed && outcome != model.OutcomeUnknown {
					o.Plan.Add(r.Action)
					if r.Refreshed {
						o.Plan.Refresh++
						o.Report.Refreshed++
					}
				}
				for _, k := range r.MissingEnv {
					env[k] = true
				}
				for _, k := range r.MissingSecrets {
					secrets[k] = true
				}
			}
			o.Notified = append(o.Notified, e.notified(u, st.results)...)
			// Steps of a batch that returned fewer results than it holds
			// never ran.
			for range max(u.Count-len(st.results), 0) {
				o.Report.Count(model.OutcomeSkipped)
			}
			continue
		}
		n := max(u.Count, 1)
		switch status {
		case model.StatusFailed, model.StatusCanceled:
			for range n {
				o.Report.Count(model.OutcomeFailed)
			}
			f := model.StepError{Step: u.Step, Error: st.err}
			o.Report.Failures = append(o.Report.Failures, f)
			if st.tolerated {
				o.Tolerated = append(o.Tolerated, f)
				tolerated += n
			}
		default:
			for range n {
				o.Report.Count(model.OutcomeSkipped)
			}
		}
	}
	o.Report.CompensationFailures = e.compFailures
	o.Report.RolledBack = rolledBack
	o.Report.Log = e.logCounts()
	o.Failed = o.Report.Failed > tolerated || o.Report.Unknown > 0 || e.halt.cancelled || e.halt.aborted
	o.MissingEnv = slices.Sorted(maps.Keys(env))
	o.MissingSecrets = slices.Sorted(maps.Keys(secrets))
	return o
}

// Err is the error a workflow fails with after this outcome, or nil. It
// names the cause and each compensation that itself failed, and carries
// the report as details.
func (o *Outcome) Err() error {
	if !o.Failed {
		return nil
	}
	var b strings.Builder
	b.WriteString(o.Cause)
	if o.Cause == "" {
		b.WriteString("execution failed")
	}
	if n := len(o.Report.Failures); n > 1 {
		fmt.Fprintf(&b, " (%d steps failed)", n)
	}
	errType := ErrFailed
	switch {
	case o.RolledBack:
		errType = ErrRolledBack
		b.WriteString("; rolled back")
	case o.Aborted:
		b.WriteString("; aborted")
	}
	if n := len(o.Report.CompensationFailures); n > 0 {
		fmt.Fprintf(&b, "; %d compensations failed:", n)
		for _, f := range o.Report.CompensationFailures {
			fmt.Fprintf(&b, " %s: %s;", f.Step, f.Error)
		}
	}
	msg := strings.TrimSuffix(b.String(), ";")
	if o.Cancelled {
		return temporal.NewCanceledError(o.Report)
	}
	return temporal.NewNonRetryableApplicationError(msg, errType, nil, o.Report)
}

// Status is the execution status this outcome ends in.
func (o *Outcome) Status() model.ExecutionStatus {
	switch {
	case o.Cancelled:
		return model.ExecCanceled
	case o.Failed && o.RolledBack:
		return model.ExecRolledBack
	case o.Failed:
		return model.ExecFailed
	}
	return model.ExecCompleted
}

// logCounts counts the messages of every step's log by level (nil when
// there are none). Cost: one pass over the steps, when the run ends.
func (e *Executor) logCounts() map[model.LogLevel]int {
	var counts map[model.LogLevel]int
	for i := range e.units {
		e.unitEntries(i, func(sp model.StepProgress) {
			for _, m := range model.StepLog(&sp) {
				if counts == nil {
					counts = map[model.LogLevel]int{}
				}
				counts[m.Level]++
			}
		})
	}
	return counts
}
