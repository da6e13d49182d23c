package graphs

import (
	"fmt"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// CrossDepsFunc evaluates a task's cross dependency written as yaql (src,
// from its field "cross_depends" or "cross_depended_by") on one node of the
// task ("master" is the control plane), returning the expression's value.
type CrossDepsFunc func(t *model.Task, field, src, node string) (any, error)

// crossDepYAQL evaluates a yaql cross dependency on each node of t and
// links that node's copy with the tasks the value names, as a literal
// cross dependency would.
func (x *graphExpansion) crossDepYAQL(t *model.Task, field, src string, reverse bool) {
	if src == "" || x.opts.CrossDeps == nil {
		return
	}
	for _, c := range x.copies[t.ID] {
		node := nodeName(x.sel.stepNode(c.node))
		v, err := x.opts.CrossDeps(t, field, src, node)
		if err != nil {
			x.fail(t, "%s on node %s: %v", field, node, err)
			continue
		}
		deps, err := CrossDepsOf(v)
		if err != nil {
			x.fail(t, "%s on node %s: %v", field, node, err)
			continue
		}
		for i, d := range deps {
			x.crossDepOf(t, fmt.Sprintf("%s[%d] on node %s", field, i, node), d, reverse, []taskCopy{c})
		}
	}
}

// CrossDepsOf reads the value of a yaql cross dependency: a list of
// {name, role, policy} (or one such object; null is none). name is a
// string, role a string or a list of strings, policy "all" or "any".
func CrossDepsOf(v any) ([]model.CrossDep, error) {
	var items []any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	default:
		return nil, fmt.Errorf("expected a list of {name, role, policy}, got %s", nested.Describe(v))
	}
	out := make([]model.CrossDep, 0, len(items))
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d]: expected {name, role, policy}, got %s", i, nested.Describe(item))
		}
		var d model.CrossDep
		for k, val := range m {
			switch k {
			case "name":
				s, ok := val.(string)
				if !ok || s == "" {
					return nil, fmt.Errorf("[%d].name: expected a task name, got %s", i, nested.Describe(val))
				}
				d.Name = s
			case "role":
				switch r := val.(type) {
				case nil:
				case string:
					d.Role = r
				case []any:
					roles := make([]string, len(r))
					for j, e := range r {
						s, ok := e.(string)
						if !ok {
							return nil, fmt.Errorf("[%d].role[%d]: expected a string, got %s", i, j, nested.Describe(e))
						}
						roles[j] = s
					}
					d.Role = roles
				default:
					return nil, fmt.Errorf("[%d].role: expected a string or a list of strings, got %s", i, nested.Describe(val))
				}
			case "policy":
				s, ok := val.(string)
				if !ok || (s != "all" && s != "any") {
					return nil, fmt.Errorf("[%d].policy: expected \"all\" or \"any\", got %v", i, val)
				}
				d.Policy = s
			default:
				return nil, fmt.Errorf("[%d]: unknown field %q (want name, role, policy)", i, k)
			}
		}
		if d.Name == "" {
			return nil, fmt.Errorf("[%d]: missing name", i)
		}
		out = append(out, d)
	}
	return out, nil
}
