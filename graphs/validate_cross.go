package graphs

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// crossRefs reports each cross dependency of e (field is cross_depends or
// cross_depended_by) that names, by id, no task of its graph: every one
// of them, at the line its name is written on, when the graph is read —
// not one at a time when it is expanded onto nodes. A /regex/ name may
// match no task (its edges are then none, as Fuel's were) and is not
// checked here. Cost: one map lookup per cross dependency.
func crossRefs(e *taskEntry, graphType string, byID map[string]*taskEntry, field string, deps []model.CrossDep, c *collector) {
	var key string
	var single bool
	for i, d := range deps {
		if d.Name == "" || isRegex(d.Name) {
			continue
		}
		if _, ok := byID[d.Name]; ok {
			continue
		}
		if key == "" {
			key, single = crossKey(e.node, field)
		}
		path := nested.Key(nested.Index(key, i), "name")
		if single {
			path = nested.Key(key, "name") // one {name, role} object, as Fuel's loader accepted
		}
		c.add(e.pos(path, false), e.path+"."+path, "cross dependency %q: no such task in graph %q", d.Name, graphType)
	}
}

// crossKey is the spelling of field in the task's mapping (Fuel wrote both
// cross_depends and cross-depends) and whether its value is one object
// rather than a list.
func crossKey(task *yaml.Node, field string) (string, bool) {
	if task == nil || task.Kind != yaml.MappingNode {
		return field, false
	}
	dashed := strings.ReplaceAll(field, "_", "-")
	for i := 0; i+1 < len(task.Content); i += 2 {
		if k := task.Content[i].Value; k == field || k == dashed {
			return k, task.Content[i+1].Kind == yaml.MappingNode
		}
	}
	return field, false
}
