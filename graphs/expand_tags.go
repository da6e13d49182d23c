package graphs

import (
	"fmt"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// Fuel 9's tasks may name tags instead of roles (`tags: [primary-database]`):
// a role stands for a set of tags (a controller is controller, database,
// keystone, rabbitmq, neutron; the primary controller the primary-… tags),
// and a task with tags runs on the nodes having one of them, its roles and
// groups then selecting no nodes (groups still order it). Cairn keeps a
// node's tags in its attribute `tags` (a list of strings); a node without
// it has its roles as tags.

// taskTags reads a task's tags: nil when it has none.
func taskTags(t *model.Task) ([]string, error) {
	v, ok := t.Extra["tags"]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("tags: expected a list of strings, got %s", nested.Describe(v))
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("tags[%d]: expected a string, got %s", i, nested.Describe(item))
		}
		out = append(out, s)
	}
	return out, nil
}

// tagSelector selects nodes by tags as nodeSelector does by roles, node
// indexes unchanged; built on first use.
func (x *graphExpansion) tagSelector() (*nodeSelector, error) {
	if x.tagSel != nil {
		return x.tagSel, nil
	}
	nodes := make([]model.Node, len(x.sel.nodes))
	for i, n := range x.sel.nodes {
		nodes[i] = model.Node{ID: n.ID, Name: n.Name, Roles: nodeTags(n)}
	}
	sel, err := newNodeSelector(nodes)
	if err != nil {
		return nil, err
	}
	x.tagSel = sel
	return sel, nil
}

// nodeTags is a node's attribute `tags`, or its roles without one.
func nodeTags(n model.Node) []string {
	list, ok := n.Attributes["tags"].([]any)
	if !ok {
		if s, ok := n.Attributes["tags"].([]string); ok {
			return s
		}
		return n.Roles
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
