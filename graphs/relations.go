package graphs

import "github.com/cairn-io/cairn/model"

// Fuel's task-based deployment dropped a relation that resolved to no task
// of the graph: plugins and optional components add and remove tasks and
// roles, and the release's tasks name them regardless. Cairn reads every
// graph document as a Fuel graph: a task's requires, required_for or
// groups naming no task is a warning when the graph is validated and no
// edge when it is expanded. A package's dependsOn naming no resource stays
// an error.

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
