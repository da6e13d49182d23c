package prepare

import (
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// graphSummary names a unit for the Temporal UI's timeline: "shell deploy
// on node-2", "noop shell deploy on node-2", "stage pre on master".
func graphSummary(u contract.Unit, steps []*planner.StoredStep, records map[string]*TaskRecord, noop, dryRun bool) string {
	if u.Batch {
		return u.Summary
	}
	rec := records[steps[0].ID]
	if rec == nil {
		return u.Summary
	}
	var b strings.Builder
	switch {
	case dryRun:
		b.WriteString("plan ")
	case noop:
		b.WriteString("noop ")
	}
	if rec.TaskType == "barrier" {
		fmt.Fprintf(&b, "end of graph %s", rec.Type)
		return b.String()
	}
	what := rec.Task
	if steps[0].Task != "" && steps[0].Task != rec.Task {
		what = steps[0].Task // type/task when several types run
	}
	where := rec.Node
	if steps[0].Node == "" && rec.Node != model.ControlPlane {
		where = model.ControlPlane + " for " + rec.Node // master_shell, a hook
	}
	fmt.Fprintf(&b, "%s %s on %s", rec.TaskType, what, where)
	switch {
	case rec.DoneBy != "":
		b.WriteString(" (done by " + rec.DoneBy + ")")
	case rec.RanIn != "":
		b.WriteString(" (ran in " + rec.RanIn + ")")
	case steps[0].Skipped:
		b.WriteString(" (skipped)")
	}
	return b.String()
}

// graphPlanSummary is the one line the UI shows of a graph execution.
func graphPlanSummary(cluster string, types []expandedType, steps, done int, req contract.GraphRequest) string {
	names := make([]string, len(types))
	for i, et := range types {
		names[i] = et.Type
	}
	line := fmt.Sprintf("graph %s on cluster %s: %d steps", strings.Join(names, ", "), cluster, steps)
	if len(req.Nodes) > 0 {
		line += ", nodes " + strings.Join(req.Nodes, ",")
	}
	if len(req.Tasks) > 0 {
		line += ", tasks " + strings.Join(req.Tasks, ",")
	}
	if done > 0 {
		line += fmt.Sprintf(", %d done before", done)
	}
	return line
}

// dryRunPlan is a dry run's plan: every step in order, a noop when it is
// structural or an earlier execution did it, its condition and why it is
// done shown as changes.
func dryRunPlan(order []*planner.StoredStep, records map[string]*TaskRecord) *model.Plan {
	plan := &model.Plan{Steps: make([]model.PlanStep, 0, len(order)), MissingEnvRefs: []string{}, MissingSecrets: []string{}}
	for _, s := range order {
		rec := records[s.ID]
		ps := model.PlanStep{ID: s.ID, Kind: rec.TaskType, Name: s.Name, Node: rec.Node, Action: model.ActionRun}
		if !rec.Recorded() {
			ps.Action = model.ActionNoop
		}
		if s.Condition != "" {
			ps.Changes = []model.AttrChange{{Path: "condition", New: s.Condition}}
		}
		if rec.DoneBy != "" {
			ps.Changes = append(ps.Changes, model.AttrChange{Path: "done", New: "by " + rec.DoneBy})
		}
		if rec.RanIn != "" {
			ps.Changes = append(ps.Changes, model.AttrChange{Path: "done", New: "ran in " + rec.RanIn + "; no event of this execution re-runs it"})
		}
		plan.Summary.Add(ps.Action)
		plan.Steps = append(plan.Steps, ps)
	}
	return plan
}
