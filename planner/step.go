// Package planner turns a package (or an expanded graph) and the stack's
// record into an execution plan: the steps to run, the deletes of what left
// the package, their order, and their grouping into units, the pieces the
// executor schedules. It does no I/O: activities load the package and the
// record, call the planner and keep its result in the store.
package planner

import (
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// StoredStep is a step as an execution keeps it: the step as built, with
// its spec already mapped onto the built-in kind that runs it, so the step
// activities need no catalogue. Single-step units are stored one per step
// (kind contract.DataStep); a multi-step unit's steps are stored together
// (contract.DataUnit), in an order where each comes after its
// dependencies in the unit.
type StoredStep struct {
	model.Step
	// Base is the provider kind (a derived kind's base, e.g. http).
	Base string `json:"base"`
	// Ord is the resource's position in the package, for the stack record.
	Ord int `json:"ord"`
	// Verbatim lists spec keys expression resolution must copy unrendered.
	Verbatim []string `json:"verbatim,omitempty"`
	// Aliases marks a kind with dependency aliases (kinds.Kind.Aliases):
	// resolution gives the spec the aliased dependencies' records.
	Aliases bool `json:"aliases,omitempty"`
	// Unit is the index of the unit holding the step.
	Unit int `json:"unit"`
	// Exported marks a step whose outputs a dependent's expressions or
	// condition read; a dry-run keeps outputs only for these.
	Exported bool `json:"exported,omitempty"`
}

// FromStep maps a built step onto the built-in kind that runs it (cat nil:
// the kind is taken as built in).
func FromStep(cat *kinds.Catalogue, s *model.Step) (*StoredStep, error) {
	ss := &StoredStep{Step: *s}
	if ss.RecordKind == "" {
		ss.RecordKind = s.Kind
	}
	if cat == nil {
		ss.Base = strings.ToLower(s.Kind)
		return ss, nil
	}
	base, spec, err := cat.BaseSpec(s.Kind, s.Spec, s.Associations)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ID, err)
	}
	ss.Base, ss.Spec = strings.ToLower(base), spec
	if k, ok := cat.Lookup(base); ok {
		ss.Verbatim = k.Verbatim
		ss.Aliases = k.Aliases
	}
	return ss, nil
}

// RecordKey identifies a resource in a stack record: kind (lower case),
// name and node.
func RecordKey(kind, name, node string) string {
	return strings.ToLower(kind) + "/" + name + "@" + node
}

// Deps lists every step s waits for (Deps and AnyOf members), once.
func Deps(s *model.Step) []string {
	if len(s.AnyOf) == 0 {
		return s.Deps
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range s.Deps {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, g := range s.AnyOf {
		for _, d := range g {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// NeedsResolve reports whether s must be resolved when it runs: it has a
// condition, a dynamic spec or dependency aliases.
func (s *StoredStep) NeedsResolve() bool {
	return s.Condition != "" || expr.HasDynamic(s.Spec) || s.DepAliases() != nil
}

// DepAliases are the step's dependency aliases (alias → resource name);
// nil for a kind without them.
func (s *StoredStep) DepAliases() map[string]string {
	if !s.Aliases {
		return nil
	}
	return kinds.DepAliases(s.Spec)
}

// Why a step is skipped before it runs (StoredStep.SkipReason); the same
// words as a step the activity skips.
const (
	NotSelected      = "not selected"
	ConditionIsFalse = "condition is false"
)

// SkipReason says why s is known to be skipped before anything runs: it
// was not selected (a task left out of the run), or its condition was
// decided false when the execution was prepared (a Fuel condition, whose
// yaql is evaluated then). "" when only running it tells.
func (s *StoredStep) SkipReason() string {
	switch {
	case s.Skipped:
		return NotSelected
	case strings.TrimSpace(s.Condition) == "false":
		return ConditionIsFalse
	}
	return ""
}
