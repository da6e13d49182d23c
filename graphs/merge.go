package graphs

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// LayerGraph is one owner's graph of a type at one layer: the release's,
// the cluster's or one plugin's.
type LayerGraph struct {
	Layer model.Layer
	Owner string
	Graph *model.Graph
}

// layerRank orders layers for a merge: release, then cluster, then plugins.
func layerRank(l model.Layer) (int, bool) {
	switch l {
	case model.LayerRelease:
		return 0, true
	case model.LayerCluster:
		return 1, true
	case model.LayerPlugin:
		return 2, true
	}
	return 0, false
}

// Merge merges the graphs of one type from the release, the cluster and the
// plugins into the graph that runs, as Fuel does:
//
//   - Layers apply in the order release → cluster → plugins, plugins in the
//     order given; a later layer is of more importance.
//   - Tasks with the same id merge field by field: every field a later task
//     sets replaces the earlier value (lists and strategy whole), except
//     parameters, which merge key by key recursively, and Extra, which
//     merges key by key.
//   - An explicit null removes a field: a name in Task.Nulls for top-level
//     fields, a nil value for a key inside parameters. A task's type cannot
//     be removed.
//   - `type: skipped` is an ordinary field change: the task is disabled and
//     keeps its merged edges.
//   - Two plugins defining the same task id is an error naming both; a
//     plugin overriding a release or cluster task is fine.
//
// Merged tasks come in the order their ids were first seen across the
// ordered layers; each records the Layer and Owner of the last layer that
// defined it. Inputs are never modified. A LayerGraph with a nil Graph is
// skipped. All errors are reported together.
func Merge(graphType string, layers ...LayerGraph) (*model.Graph, error) {
	if graphType == "" {
		graphType = model.DefaultGraphType
	}
	var errs []error
	ordered := make([]LayerGraph, 0, len(layers))
	for _, l := range layers {
		if _, ok := layerRank(l.Layer); !ok {
			errs = append(errs, fmt.Errorf("graph of %q: unknown layer %q (want release, cluster or plugin)", l.Owner, l.Layer))
			continue
		}
		if l.Graph != nil {
			ordered = append(ordered, l)
		}
	}
	slices.SortStableFunc(ordered, func(a, b LayerGraph) int {
		ra, _ := layerRank(a.Layer)
		rb, _ := layerRank(b.Layer)
		return cmp.Compare(ra, rb)
	})

	out := &model.Graph{Type: graphType}
	total := 0
	for _, l := range ordered {
		total += len(l.Graph.Tasks)
	}
	merged := make(map[string]*model.Task, total)
	pluginOf := map[string]string{} // task id → the plugin that defined it
	for _, l := range ordered {
		if l.Graph.Name != "" {
			out.Name = l.Graph.Name
		}
		seen := make(map[string]bool, len(l.Graph.Tasks))
		where := fmt.Sprintf("%s %q", l.Layer, l.Owner)
		for i, t := range l.Graph.Tasks {
			switch {
			case t == nil:
				errs = append(errs, fmt.Errorf("%s: task %d is empty", where, i))
				continue
			case t.ID == "":
				errs = append(errs, fmt.Errorf("%s: task %d has no id", where, i))
				continue
			case seen[t.ID]:
				errs = append(errs, fmt.Errorf("%s defines task %q twice", where, t.ID))
				continue
			}
			seen[t.ID] = true
			if l.Layer == model.LayerPlugin {
				if other, ok := pluginOf[t.ID]; ok {
					if other == l.Owner {
						errs = append(errs, fmt.Errorf("plugin %q is given twice (task %q)", l.Owner, t.ID))
					} else {
						errs = append(errs, fmt.Errorf("task %q is defined by both plugin %q and plugin %q", t.ID, other, l.Owner))
					}
					continue
				}
				pluginOf[t.ID] = l.Owner
			}
			dst, ok := merged[t.ID]
			if !ok {
				dst = &model.Task{ID: t.ID}
				merged[t.ID] = dst
				out.Tasks = append(out.Tasks, dst)
			}
			if err := mergeTask(dst, t); err != nil {
				errs = append(errs, fmt.Errorf("%s: task %q: %w", where, t.ID, err))
			}
			dst.Layer, dst.Owner, dst.Pos = l.Layer, l.Owner, t.Pos
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if out.Tasks == nil {
		out.Tasks = []*model.Task{}
	}
	return out, nil
}

// mergeTask lays src over dst, which the merge owns. Nothing of src is
// shared with dst afterwards.
func mergeTask(dst, src *model.Task) error {
	if src.Type != "" {
		dst.Type = src.Type
	}
	if src.Version != "" {
		dst.Version = src.Version
	}
	if src.Roles != nil {
		dst.Roles = slices.Clone(src.Roles)
	}
	if src.Groups != nil {
		dst.Groups = slices.Clone(src.Groups)
	}
	if src.Tasks != nil {
		dst.Tasks = slices.Clone(src.Tasks)
	}
	if src.Requires != nil {
		dst.Requires = slices.Clone(src.Requires)
	}
	if src.RequiredFor != nil {
		dst.RequiredFor = slices.Clone(src.RequiredFor)
	}
	if src.CrossDepends != nil || src.CrossDependsYAQL != "" {
		dst.CrossDepends, dst.CrossDependsYAQL = cloneCrossDeps(src.CrossDepends), src.CrossDependsYAQL
	}
	if src.CrossDependedBy != nil || src.CrossDependedByYAQL != "" {
		dst.CrossDependedBy, dst.CrossDependedByYAQL = cloneCrossDeps(src.CrossDependedBy), src.CrossDependedByYAQL
	}
	if src.Condition != "" {
		dst.Condition = src.Condition
	}
	if src.FailOnError != nil {
		v := *src.FailOnError
		dst.FailOnError = &v
	}
	if src.Strategy != nil {
		s := *src.Strategy
		dst.Strategy = &s
	}
	if src.FaultTolerance != "" {
		dst.FaultTolerance = src.FaultTolerance
	}
	if src.Parameters != nil {
		dst.Parameters = mergeParams(dst.Parameters, src.Parameters)
	}
	mergeMeta(&dst.Meta, src.Meta)
	for k, v := range src.Extra {
		if v == nil {
			delete(dst.Extra, k)
			continue
		}
		if dst.Extra == nil {
			dst.Extra = map[string]any{}
		}
		dst.Extra[k] = mergeClone(v)
	}
	for _, field := range src.Nulls {
		if err := clearTaskField(dst, field); err != nil {
			return err
		}
	}
	if len(dst.Extra) == 0 {
		dst.Extra = nil
	}
	return nil
}

func mergeMeta(dst *model.Meta, src model.Meta) {
	if src.Retry != 0 {
		dst.Retry = src.Retry
	}
	if src.Delay != "" {
		dst.Delay = src.Delay
	}
	if src.Timeout != "" {
		dst.Timeout = src.Timeout
	}
	if src.Noop {
		dst.Noop = true
	}
	if src.Idempotent {
		dst.Idempotent = true
	}
}

// clearTaskField removes a top-level field set to null. Names are the
// document's field names; any other name is an Extra field.
func clearTaskField(t *model.Task, field string) error {
	switch field {
	case "id":
		return errors.New("id cannot be null")
	case "type":
		return errors.New("type cannot be removed (use `type: skipped` to disable the task)")
	case "version":
		t.Version = ""
	case "roles":
		t.Roles = nil
	case "groups":
		t.Groups = nil
	case "tasks":
		t.Tasks = nil
	case "requires":
		t.Requires = nil
	case "required_for":
		t.RequiredFor = nil
	case "cross_depends":
		t.CrossDepends, t.CrossDependsYAQL = nil, ""
	case "cross_depended_by":
		t.CrossDependedBy, t.CrossDependedByYAQL = nil, ""
	case "condition":
		t.Condition = ""
	case "fail_on_error":
		t.FailOnError = nil
	case "strategy":
		t.Strategy = nil
	case "fault_tolerance":
		t.FaultTolerance = ""
	case "parameters":
		t.Parameters = nil
	case "meta":
		t.Meta = model.Meta{}
	default:
		delete(t.Extra, field)
	}
	return nil
}

// mergeParams lays over on base key by key: nested maps merge recursively,
// a nil value removes the key, anything else replaces it. The result shares
// nothing with either argument and holds no nil map values.
func mergeParams(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = mergeClone(v)
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		if om, ok := v.(map[string]any); ok {
			bm, _ := out[k].(map[string]any)
			out[k] = mergeParams(bm, om)
			continue
		}
		out[k] = mergeClone(v)
	}
	return out
}

// mergeClone deep-copies a JSON-like value: nested.MapAnyOrder copies its
// maps and lists, string lists and maps are cloned whole.
func mergeClone(v any) any {
	out, _ := nested.MapAnyOrder(v, "", func(_ nested.Path, v any) (any, error) {
		switch x := v.(type) {
		case []string:
			return slices.Clone(x), nested.SkipChildren
		case map[string]string:
			return maps.Clone(x), nested.SkipChildren
		}
		return v, nil
	})
	return out
}

func cloneCrossDeps(in []model.CrossDep) []model.CrossDep {
	if in == nil {
		return nil
	}
	out := make([]model.CrossDep, len(in))
	for i, d := range in {
		d.Role = mergeClone(d.Role)
		out[i] = d
	}
	return out
}
