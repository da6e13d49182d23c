package workflows

import (
	"slices"

	"github.com/cairn-io/cairn/contract"
)

// Refresh along notify and subscribe edges: a step is refreshed when a
// step it subscribes to changed in this run (in a dry-run: would). The
// activity settles subscriptions inside its unit from its own steps'
// results; the executor settles those across units from the results it
// keeps, and names the refreshed steps in the unit's input, so which
// upstream changed is decided once, deterministically, and never read
// again from the store. Steps of earlier shards that changed come in
// NotifiedOutside.

// NotifiedOutside takes the steps of earlier shards that changed and
// refresh steps of this executor's units (Outcome.Notified).
func (e *Executor) NotifiedOutside(steps []string) {
	if len(steps) == 0 {
		return
	}
	e.notifiedOutside = make(map[string]bool, len(steps))
	for _, s := range steps {
		e.notifiedOutside[s] = true
	}
}

// refreshed lists the steps of unit u refreshed by steps of other units.
// Cost: O(subscriptions × steps of their sources' units).
func (e *Executor) refreshed(u *contract.Unit) []string {
	var out []string
	for _, sub := range u.Subscriptions {
		if slices.ContainsFunc(sub.From, e.changed) {
			out = append(out, sub.Step)
		}
	}
	return out
}

// changed reports whether step src changed in this run, as far as the
// executor knows: from its unit's results, or for a unit of an earlier
// shard from NotifiedOutside.
func (e *Executor) changed(src contract.StepRef) bool {
	l, ok := e.local(src.Unit)
	if !ok {
		return e.notifiedOutside[src.Step]
	}
	noop := e.opts.Mode == contract.ModeDryRun
	for _, r := range e.state[l].results {
		if r.StepID == src.Step {
			return r.Notifies(noop)
		}
	}
	return false
}

// notified lists the steps of unit u that refresh steps of other units
// (u.Sources) and changed, by results.
func (e *Executor) notified(u *contract.Unit, results []contract.StepResult) []string {
	if len(u.Sources) == 0 {
		return nil
	}
	noop := e.opts.Mode == contract.ModeDryRun
	var out []string
	for _, r := range results {
		if r.Notifies(noop) && slices.Contains(u.Sources, r.StepID) {
			out = append(out, r.StepID)
		}
	}
	return out
}
