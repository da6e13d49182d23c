package graphs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/yaql"
)

// MarshalGraph renders a graph as a Cairn graph document in "yaml" (or
// "yml") or "json": apiVersion, kind Graph, metadata {name, type} and the
// tasks, each with its typed fields in a fixed order followed by its Extra
// fields sorted by name. Explicit nulls (Task.Nulls) are written as null so
// a layer graph keeps its meaning; layer, owner and position are not
// written. Empty but present lists and maps are kept ([] and {}), and a
// whole float keeps its decimal point, so parsing the output yields the
// same graph.
func MarshalGraph(g *model.Graph, format string) ([]byte, error) {
	if g == nil {
		return nil, fmt.Errorf("marshal graph: no graph")
	}
	doc, err := outGraph(g)
	if err != nil {
		return nil, fmt.Errorf("marshal graph: %w", err)
	}
	switch strings.ToLower(format) {
	case "yaml", "yml":
		var w yamlWriter
		if err := w.mapping(doc, 0, false); err != nil {
			return nil, fmt.Errorf("marshal graph: %w", err)
		}
		return w.buf.Bytes(), nil
	case "json":
		var buf bytes.Buffer
		if err := writeJSON(&buf, doc, 0); err != nil {
			return nil, fmt.Errorf("marshal graph: %w", err)
		}
		buf.WriteByte('\n')
		return buf.Bytes(), nil
	default:
		return nil, fmt.Errorf("marshal graph: unknown format %q (want yaml or json)", format)
	}
}

// outObject is a JSON/YAML object whose keys keep their order.
type outObject []outField

type outField struct {
	key   string
	value any // outObject, []any, string, bool, nil, int64, outFloat, json.Number
}

// outFloat is a float that renders with a decimal point when whole, so it
// reads back as a float rather than an integer.
type outFloat float64

func (f outFloat) text() (string, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", fmt.Errorf("number %v cannot be written", v)
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s, nil
}

func (o *outObject) add(key string, value any) { *o = append(*o, outField{key, value}) }

func outGraph(g *model.Graph) (outObject, error) {
	meta := outObject{}
	if g.Name != "" {
		meta.add("name", g.Name)
	}
	meta.add("type", cmp.Or(g.Type, model.DefaultGraphType))
	tasks := make([]any, 0, len(g.Tasks))
	for i, t := range g.Tasks {
		if t == nil {
			return nil, fmt.Errorf("task %d is nil", i)
		}
		obj, err := outTask(t)
		if err != nil {
			return nil, fmt.Errorf("task %q: %w", t.ID, err)
		}
		tasks = append(tasks, obj)
	}
	return outObject{
		{"apiVersion", model.APIVersion},
		{"kind", "Graph"},
		{"metadata", meta},
		{"tasks", tasks},
	}, nil
}

func outTask(t *model.Task) (outObject, error) {
	o := outObject{{"id", t.ID}}
	str := func(key, v string) {
		if v != "" {
			o.add(key, v)
		}
	}
	str("type", t.Type) // a layer may leave it to an earlier one
	list := func(key string, v []string) {
		if v != nil {
			o.add(key, outStrings(v))
		}
	}
	cross := func(key string, deps []model.CrossDep, src string) error {
		if src != "" {
			o.add(key, outObject{{"yaql_exp", src}})
			return nil
		}
		if deps == nil {
			return nil
		}
		items := make([]any, 0, len(deps))
		for _, d := range deps {
			c := outObject{{"name", d.Name}}
			if d.Role != nil {
				role, err := outValue(d.Role)
				if err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
				c.add("role", role)
			}
			if d.Policy != "" {
				c.add("policy", d.Policy)
			}
			items = append(items, c)
		}
		o.add(key, items)
		return nil
	}
	str("version", t.Version)
	list("roles", t.Roles)
	list("groups", t.Groups)
	list("tasks", t.Tasks)
	list("requires", t.Requires)
	list("required_for", t.RequiredFor)
	if err := cross("cross_depends", t.CrossDepends, t.CrossDependsYAQL); err != nil {
		return nil, err
	}
	if err := cross("cross_depended_by", t.CrossDependedBy, t.CrossDependedByYAQL); err != nil {
		return nil, err
	}
	if src, ok := yaql.Untag(t.Condition); ok {
		o.add("condition", outObject{{"yaql_exp", src}})
	} else {
		str("condition", t.Condition)
	}
	if t.FailOnError != nil {
		o.add("fail_on_error", *t.FailOnError)
	}
	if t.Strategy != nil {
		s := outObject{{"type", t.Strategy.Type}}
		switch {
		case t.Strategy.AmountYAQL != "":
			s.add("amount", outObject{{"yaql_exp", t.Strategy.AmountYAQL}})
		case t.Strategy.Amount != 0:
			s.add("amount", int64(t.Strategy.Amount))
		}
		o.add("strategy", s)
	}
	str("fault_tolerance", t.FaultTolerance)
	if t.Parameters != nil {
		p, err := outValue(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
		o.add("parameters", p)
	}
	if t.Meta != (model.Meta{}) {
		m := outObject{}
		if t.Meta.Retry != 0 {
			m.add("retry", int64(t.Meta.Retry))
		}
		if t.Meta.Delay != "" {
			m.add("delay", t.Meta.Delay)
		}
		if t.Meta.Timeout != "" {
			m.add("timeout", t.Meta.Timeout)
		}
		if t.Meta.Noop {
			m.add("noop", true)
		}
		if t.Meta.Idempotent {
			m.add("idempotent", true)
		}
		o.add("meta", m)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Extra)) {
		v, err := outValue(t.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		o.add(k, v)
	}
	for _, k := range t.Nulls {
		if !slices.ContainsFunc(o, func(f outField) bool { return f.key == k }) {
			o.add(k, nil)
		}
	}
	return o, nil
}

func outStrings(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// outValue turns a decoded JSON-like value into document values: maps
// become objects with sorted keys, every integer int64, floats outFloat.
func outValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, json.Number:
		return x, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), nil
	case float32:
		return outFloat(x), nil
	case float64:
		return outFloat(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case []string:
		return outStrings(x), nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			d, err := outValue(item)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = d
		}
		return out, nil
	case map[string]any:
		out := make(outObject, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			d, err := outValue(x[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out = append(out, outField{k, d})
		}
		return out, nil
	case map[string]string:
		out := make(outObject, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, outField{k, x[k]})
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unsupported value of type %s", reflect.TypeOf(v))
	}
}
