package prepare

import (
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// PrecheckSteps lists, in plan order, the steps of an apply that the
// kinds' prechecks (an external program's config against its schema, its
// required plugs) run over before any unit runs, so one bad resource
// applies nothing: the steps of a kind in kinds that the control plane
// applies unconditionally. Steps on agents' nodes, deletes, skipped and
// conditional steps are checked when they run.
func PrecheckSteps(members [][]*planner.StoredStep, kinds map[string]bool) []*planner.StoredStep {
	var out []*planner.StoredStep
	for _, m := range members {
		for _, s := range m {
			if kinds[s.Base] && !s.Delete && !s.Skipped && s.Node == "" && s.Condition == "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// StepWhere is "document:line:column: " of the resource s was built from,
// when pkg knows it ("" otherwise), to start a message about s.
func StepWhere(pkg *model.Package, s *planner.StoredStep) string {
	if pkg == nil {
		return ""
	}
	r := pkg.Lookup(model.Ref{Kind: s.RecordKind, Name: s.Name})
	if r == nil || r.Pos.Line == 0 {
		return ""
	}
	return r.Pos.String() + ": "
}
