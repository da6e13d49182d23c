package planner

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// maxSharedSpec keeps units small: a step whose spec is larger runs alone.
const maxSharedSpec = 16 << 10

// maxSummaryBytes bounds a unit's summary.
const maxSummaryBytes = 600

// MaxNamedSteps is the largest plan whose units carry their steps' ids
// (contract.Unit.Steps): about 25 bytes an id keeps the plan's units far
// below Temporal's 2 MB payload limit. Larger plans name a running unit by
// its first step and count.
const MaxNamedSteps = 20000

// alone reports whether s must be a unit of its own. The rule: a step runs
// alone when something the executor does per unit would otherwise apply to
// other steps too —
//   - its own meta params (retry, delay, timeout): they become the
//     activity's retry policy and timeouts (noop is per step and stays);
//   - a strategy cap (Fuel's one_by_one, parallel amount): it counts units
//     in flight;
//   - an AnyOf group (cross_depends with policy any): the executor settles
//     "one of" between units;
//   - fail_on_error: false: the executor turns the unit's failure into a
//     skip;
//   - a spec over 16 KiB, which would fatten the unit's stored record.
//
// Everything else — any kind, a condition, references resolved at run
// time, dependencies on other steps of the unit — can share a unit.
func alone(s *StoredStep) bool {
	meta := s.Meta
	meta.Noop, meta.Idempotent = false, false
	if meta != (model.Meta{}) || s.Strategy != 0 || len(s.AnyOf) > 0 || !s.FailsOnError() {
		return true
	}
	raw, err := json.Marshal(s.Spec)
	return err != nil || len(raw) > maxSharedSpec
}

// group puts the ordered steps into units. Steps share a unit when they
// run on the same node (a unit is one activity on that node's worker), in
// the same fault-tolerance group, and are all deletes or all not, all noop
// versions (Fuel's noop run) or all not; a unit
// may hold steps that depend on each other, which run in order inside it,
// so a chain or a group of dependents is a few units, not one per step.
//
// A unit holds up to size steps, and up to twice that for steps that
// continue a chain or group already in it (see below).
//
// The unit graph stays acyclic by construction: every unit gets an index
// when it opens, and a step joins an open unit only if each of its
// dependencies outside that unit lies in a unit with a lower index;
// otherwise the unit is closed and the step opens a new one. So a unit's
// dependencies always have lower indexes, which sharding relies on.
// Cost: O(steps + edges).
func group(mode contract.Mode, order []*StoredStep, size int) ([]contract.Unit, [][]*StoredStep) {
	var members [][]*StoredStep
	unitOf := make(map[string]int, len(order))
	fanOut := make(map[string]int, len(order))
	for _, s := range order {
		for _, d := range Deps(&s.Step) {
			fanOut[d]++
		}
	}
	open := map[string]int{} // unit key → index of the open unit
	for _, s := range order {
		if size <= 1 || alone(s) {
			unitOf[s.ID] = len(members)
			members = append(members, []*StoredStep{s})
			continue
		}
		key := fmt.Sprintf("%s|%s|%v|%v", s.Node, s.Group, s.Delete, s.Meta.Noop)
		u, ok := open[key]
		if ok {
			pulled := false // s continues a chain or group the unit holds
			for _, d := range Deps(&s.Step) {
				du := unitOf[d]
				if du != u && du > u {
					ok = false
					break
				}
				if du == u && fanOut[d] < size {
					pulled = true
				}
			}
			// A full unit takes no new work, but it finishes what it
			// holds: a step that follows one of its members (a chain's
			// next link, a group's next dependent) may overflow it up to
			// twice its size, so a chain or group is not cut at a unit
			// boundary into two units where the second waits for the
			// first. Hubs (a directory every file lives in) do not pull.
			switch n := len(members[u]); {
			case n >= 2*size:
				ok = false
			case n >= size && !pulled:
				ok = false
			}
		}
		if !ok {
			u = len(members)
			members = append(members, nil)
			open[key] = u
		}
		unitOf[s.ID] = u
		members[u] = append(members[u], s)
	}
	units := make([]contract.Unit, len(members))
	named := len(order) <= MaxNamedSteps
	for i, m := range members {
		for _, s := range m {
			s.Unit = i
		}
		units[i] = unit(mode, i, m, unitOf)
		// A settled unit names its steps whatever the plan's size: no
		// activity reports them, so only the ids list them.
		if (named || units[i].Settled != "") && len(m) > 1 {
			units[i].Steps = make([]string, len(m))
			for j, s := range m {
				units[i].Steps[j] = s.ID
			}
			// The ids name the steps: the summary, in every plan's answer
			// and every scheduled activity, names only the first and last.
			units[i].Summary = fmt.Sprintf("%s %d steps: %s … %s", verb(mode, m[0]), len(m), m[0].ID, m[len(m)-1].ID)
		}
	}
	sources(units)
	return units, members
}

// unit describes steps (already numbered idx) for the executor.
func unit(mode contract.Mode, idx int, steps []*StoredStep, unitOf map[string]int) contract.Unit {
	first := steps[0]
	u := contract.Unit{
		Index: idx, Step: first.ID, Count: len(steps), Batch: len(steps) > 1,
		Kind: first.Kind, Node: first.Node, Delete: first.Delete, Group: first.Group,
	}
	deps := map[int]bool{}
	for _, s := range steps {
		if s.Kind != u.Kind {
			u.Kind = "" // mixed: each step's result names its own
		}
		for _, d := range s.Deps {
			if du := unitOf[d]; du != idx {
				deps[du] = true
			}
		}
	}
	for d := range deps {
		u.Deps = append(u.Deps, d)
	}
	sort.Ints(u.Deps)
	u.Subscriptions = subscriptions(idx, steps, unitOf)
	// A unit's steps all are noop versions or none is: a noop unit only
	// reads and diffs, and records its plan.
	u.Meta.Noop = first.Meta.Noop
	if !u.Batch {
		u.Meta = first.Meta
		u.Strategy, u.Task, u.Scope = first.Strategy, first.Task, first.StrategyScope
		u.ContinueOnError = !first.FailsOnError()
		for _, g := range first.AnyOf {
			seen := map[int]bool{}
			var group []int
			for _, d := range g {
				if ui := unitOf[d]; !seen[ui] {
					seen[ui] = true
					group = append(group, ui)
				}
			}
			sort.Ints(group)
			u.AnyOf = append(u.AnyOf, group)
		}
	}
	u.Summary = summary(mode, steps)
	u.Settled = settled(steps)
	return u
}

// settled is a unit's Settled: why every one of its steps is skipped
// before it runs, or "" when one of them has to run to tell.
func settled(steps []*StoredStep) string {
	why := ""
	for _, s := range steps {
		r := s.SkipReason()
		switch {
		case r == "":
			return ""
		case why == "":
			why = r
		case why != r:
			why = NotSelected + " or " + ConditionIsFalse
		}
	}
	return why
}

// verb says what a unit starting with first does.
func verb(mode contract.Mode, first *StoredStep) string {
	switch {
	case mode == contract.ModeDryRun && first.Delete:
		return "plan delete"
	case mode == contract.ModeDryRun:
		return "plan"
	case first.Delete:
		return "delete"
	}
	return "apply"
}

// sources fills in each unit's Sources from the others' Subscriptions.
func sources(units []contract.Unit) {
	for i := range units {
		for _, sub := range units[i].Subscriptions {
			for _, src := range sub.From {
				if u := &units[src.Unit]; !slices.Contains(u.Sources, src.Step) {
					u.Sources = append(u.Sources, src.Step)
				}
			}
		}
	}
}

// subscriptions lists the steps of unit idx that steps of other units
// refresh, with those steps' units; the activity settles the rest.
func subscriptions(idx int, steps []*StoredStep, unitOf map[string]int) []contract.Subscription {
	var out []contract.Subscription
	for _, s := range steps {
		var from []contract.StepRef
		for _, src := range s.Subscribes {
			if su, ok := unitOf[src]; ok && su != idx {
				from = append(from, contract.StepRef{Unit: su, Step: src})
			}
		}
		if len(from) > 0 {
			out = append(out, contract.Subscription{Step: s.ID, From: from})
		}
	}
	return out
}

// summary names what a unit does, each of its steps while they fit:
// "apply file/a", "apply 3 steps: file/a, file/b, exec/c",
// "plan 100 steps: file/a, … (+80 more)".
func summary(mode contract.Mode, steps []*StoredStep) string {
	first := steps[0]
	var b strings.Builder
	b.WriteString(verb(mode, first))
	if len(steps) == 1 {
		b.WriteString(" " + first.ID)
	} else {
		fmt.Fprintf(&b, " %d steps:", len(steps))
		for i, s := range steps {
			if b.Len()+len(s.ID) > maxSummaryBytes {
				fmt.Fprintf(&b, " … (+%d more)", len(steps)-i)
				break
			}
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" " + s.ID)
		}
	}
	if first.Node != "" && !strings.Contains(first.ID, "@"+first.Node) {
		b.WriteString(" on " + first.Node)
	}
	return b.String()
}
