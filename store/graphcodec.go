package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// The parsed form of a graph is kept as JSON in which every task is one flat
// object, as in a Fuel document: its typed fields plus the fields it carried
// beyond them (Task.Extra). What model.Task leaves out of its JSON for a
// merge to use (explicit nulls, layer, owner, source position) is kept under
// the reserved key "_cairn".

const taskMetaKey = "_cairn"

type taskMeta struct {
	Nulls []string        `json:"nulls,omitempty"`
	Layer model.Layer     `json:"layer,omitempty"`
	Owner string          `json:"owner,omitempty"`
	Pos   *model.Position `json:"pos,omitempty"`
}

type storedGraphJSON struct {
	Name  string            `json:"name,omitempty"`
	Type  string            `json:"type"`
	Tasks []json.RawMessage `json:"tasks"`
}

// typedTaskKeys are the JSON names of model.Task's own fields.
var typedTaskKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[model.Task]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// encodeGraph renders g in the stored form; nil is stored as JSON null.
func encodeGraph(g *model.Graph) ([]byte, error) {
	if g == nil {
		return []byte("null"), nil
	}
	out := storedGraphJSON{Name: g.Name, Type: g.Type, Tasks: make([]json.RawMessage, 0, len(g.Tasks))}
	for i, t := range g.Tasks {
		if t == nil {
			return nil, fmt.Errorf("task %d is nil", i)
		}
		b, err := encodeTask(t)
		if err != nil {
			return nil, fmt.Errorf("task %q: %w", t.ID, err)
		}
		out.Tasks = append(out.Tasks, b)
	}
	return json.Marshal(out)
}

func encodeTask(t *model.Task) ([]byte, error) {
	typed, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	meta := taskMeta{Nulls: t.Nulls, Layer: t.Layer, Owner: t.Owner}
	if t.Pos != (model.Position{}) {
		meta.Pos = &t.Pos
	}
	hasMeta := len(meta.Nulls) > 0 || meta.Layer != "" || meta.Owner != "" || meta.Pos != nil
	if len(t.Extra) == 0 && !hasMeta {
		return typed, nil
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(typed, &fields); err != nil {
		return nil, err
	}
	for k, v := range t.Extra {
		if typedTaskKeys[k] || k == taskMetaKey {
			return nil, fmt.Errorf("extra field %q has the name of a field Cairn reserves", k)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
		fields[k] = b
	}
	if hasMeta {
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		fields[taskMetaKey] = b
	}
	return json.Marshal(fields) // keys sorted: a stable encoding
}

// decodeGraph reads the stored form back. Numbers in untyped values
// (parameters, extra fields, cross-dependency roles) come back as int64 when
// integral and in range, else float64, as model.Spec documents.
func decodeGraph(b []byte) (*model.Graph, error) {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil, nil
	}
	var in storedGraphJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	g := &model.Graph{Name: in.Name, Type: in.Type, Tasks: make([]*model.Task, 0, len(in.Tasks))}
	for i, raw := range in.Tasks {
		t, err := decodeTask(raw)
		if err != nil {
			return nil, fmt.Errorf("task %d: %w", i, err)
		}
		g.Tasks = append(g.Tasks, t)
	}
	return g, nil
}

func decodeTask(raw []byte) (*model.Task, error) {
	var t model.Task
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	t.Parameters = normalizeMap(t.Parameters)
	for i := range t.CrossDepends {
		t.CrossDepends[i].Role = normalizeNumbers(t.CrossDepends[i].Role)
	}
	for i := range t.CrossDependedBy {
		t.CrossDependedBy[i].Role = normalizeNumbers(t.CrossDependedBy[i].Role)
	}

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		if typedTaskKeys[k] {
			continue
		}
		if k == taskMetaKey {
			var meta taskMeta
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, fmt.Errorf("%s: %w", taskMetaKey, err)
			}
			t.Nulls, t.Layer, t.Owner = meta.Nulls, meta.Layer, meta.Owner
			if meta.Pos != nil {
				t.Pos = *meta.Pos
			}
			continue
		}
		val, err := decodeAny(v)
		if err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
		if t.Extra == nil {
			t.Extra = map[string]any{}
		}
		t.Extra[k] = val
	}
	return &t, nil
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalizeNumbers(v), nil
}

func normalizeMap(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = normalizeNumbers(v)
	}
	return m
}

// normalizeNumbers replaces json.Number values by int64 or float64.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return x.String()
		}
		return f
	case map[string]any:
		return normalizeMap(x)
	case []any:
		for i := range x {
			x[i] = normalizeNumbers(x[i])
		}
		return x
	default:
		return v
	}
}
