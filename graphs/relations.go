package graphs

import "github.com/cairn-io/cairn/model"

// Fuel's task-based deployment dropped a relation that resolved to no task
// of the graph: plugins and optional components add and remove tasks and
// roles, and the release's tasks name them regardless. Cairn reads every
// graph document as a Fuel graph: a task's requires, required_for or
// groups naming no task is a warning when the graph is validated and no
// edge when it is expanded. A package's dependsOn naming no resource stays
// an error.
//
// A groups entry written /regex/ (fuel-library's ['/.*/'] on tasks that
// run everywhere: fuel_pkgs, plugins_rsync) puts the task on the nodes of
// every group task whose id it matches. Fuel's task-based deployment
// resolved groups as it resolved roles, for the nodes only; so does Cairn
// for these entries: the task does not join those groups' ordering (a
// pre-deployment task such as plugins_rsync would otherwise inherit the
// groups' "after deploy_start" and close a cycle through its own
// required_for: pre_deployment_end). A group named literally still orders
// its members.

// relationDropped ends the warning about such a relation.
const relationDropped = "the relation is dropped, as Fuel's task-based deployment did"

// droppedRelation reports whether a missing target of a task field is
// dropped with a warning rather than refused.
func droppedRelation(field string) bool {
	return field == "requires" || field == "required_for" || field == "groups"
}

// groupsNamed resolves a /regex/ groups entry: the group tasks whose id it
// matches from the start, in graph order.
func (x *graphExpansion) groupsNamed(pattern string) ([]*model.Task, error) {
	re, err := x.sel.compile(pattern)
	if err != nil {
		return nil, err
	}
	var out []*model.Task
	for _, t := range x.tasks {
		if t.Type == model.TaskGroup && re.MatchString(t.ID) {
			out = append(out, t)
		}
	}
	return out, nil
}
