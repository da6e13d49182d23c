package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// The package encoder renders a parsed package back into documents (pkger
// shape, one per resource, kind definitions first), in a fixed key order so
// the same package always gives the same bytes. Snapshots use its JSON
// form, so a package sent as YAML, JSON or Jsonnet (or fetched from several
// URLs) is stored once, in one form the executor reads with graphs.Parse.
// Export uses it for YAML and JSON. A whole float keeps its decimal point,
// so reading the output back gives the same values.

// field is one key of an ordered object.
type field struct {
	key   string
	value any
}

// object is an ordered object; nil values are left out.
type object []field

func (o *object) add(key string, value any) {
	if value == nil {
		return
	}
	*o = append(*o, field{key, value})
}

// addRefs adds a list of references as "Kind/name" strings, unless empty.
func (o *object) addRefs(key string, refs []model.Ref) {
	if len(refs) == 0 {
		return
	}
	out := make([]any, len(refs))
	for i, s := range refStrings(refs) {
		out[i] = s
	}
	o.add(key, out)
}

// resourceDocument renders one resource.
func resourceDocument(r *model.Resource) object {
	apiVersion := r.APIVersion
	if apiVersion == "" {
		apiVersion = model.APIVersion
	}
	doc := object{{"apiVersion", apiVersion}, {"kind", r.Kind}, {"metadata", object{{"name", r.Name}}}}
	if r.Spec != nil {
		doc.add("spec", map[string]any(r.Spec))
	}
	doc.addRefs("dependsOn", r.DependsOn)
	doc.addRefs("notify", r.Notify)
	doc.addRefs("subscribe", r.Subscribe)
	if len(r.Associations) > 0 {
		assoc := make([]any, len(r.Associations))
		for i, a := range r.Associations {
			assoc[i] = object{{"kind", a.Kind}, {"name", a.Name}}
		}
		doc.add("associations", assoc)
	}
	if t := r.Target; t != nil && (len(t.Roles) > 0 || len(t.Nodes) > 0) {
		var target object
		if len(t.Roles) > 0 {
			target.add("roles", anyStrings(t.Roles))
		}
		if len(t.Nodes) > 0 {
			target.add("nodes", anyStrings(t.Nodes))
		}
		doc.add("target", target)
	}
	if m := r.Meta; m != (model.Meta{}) {
		var meta object
		if m.Retry != 0 {
			meta.add("retry", int64(m.Retry))
		}
		if m.Delay != "" {
			meta.add("delay", m.Delay)
		}
		if m.Timeout != "" {
			meta.add("timeout", m.Timeout)
		}
		if m.Noop {
			meta.add("noop", true)
		}
		if m.Idempotent {
			meta.add("idempotent", true)
		}
		doc.add("meta", meta)
	}
	return doc
}

// kindDocument renders a kind definition (`kind: Kind`).
func kindDocument(k kinds.Kind) (object, error) {
	var spec object
	spec.add("base", k.Base)
	if k.Wrap != "" {
		spec.add("wrap", k.Wrap)
	}
	if k.Description != "" {
		spec.add("description", k.Description)
	}
	if len(k.Defaults) > 0 {
		spec.add("defaults", k.Defaults)
	}
	if k.Associations != nil {
		spec.add("associations", object{{"path", k.Associations.Path}, {"field", k.Associations.Field}})
	}
	if len(k.Schema) > 0 {
		var schema any
		dec := json.NewDecoder(bytes.NewReader(k.Schema))
		dec.UseNumber()
		if err := dec.Decode(&schema); err != nil {
			return nil, fmt.Errorf("kind %s: schema: %w", k.Name, err)
		}
		spec.add("schema", schema)
	}
	if len(k.Attributes) > 0 {
		attrs := map[string]any{}
		for name, ak := range k.Attributes {
			attrs[name] = string(ak)
		}
		spec.add("attributes", attrs)
	}
	if len(k.AutoEdges) > 0 {
		edges := make([]any, len(k.AutoEdges))
		for i, e := range k.AutoEdges {
			edges[i] = object{{"kind", e.Kind}, {"from", e.From}, {"attr", e.Attr}, {"match", e.Match}}
		}
		spec.add("autoEdges", edges)
	}
	if len(k.Verbatim) > 0 {
		spec.add("verbatim", anyStrings(k.Verbatim))
	}
	return object{
		{"apiVersion", model.APIVersion}, {"kind", kinds.DefinitionKind},
		{"metadata", object{{"name", k.Name}}}, {"spec", spec},
	}, nil
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// encodePackage renders kind definitions and resources as documents: a
// JSON array, or multi-document YAML.
func encodePackage(defs []kinds.Kind, resources []*model.Resource, format string) ([]byte, error) {
	docs := make([]object, 0, len(defs)+len(resources))
	for _, k := range defs {
		d, err := kindDocument(k)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	for _, r := range resources {
		docs = append(docs, resourceDocument(r))
	}
	if format == "json" {
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i, d := range docs {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
			if err := writeJSON(&buf, d); err != nil {
				return nil, err
			}
		}
		buf.WriteString("\n]\n")
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, buf.Bytes(), "", "  "); err != nil {
			return nil, err
		}
		pretty.WriteByte('\n')
		return pretty.Bytes(), nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		n, err := yamlNode(d)
		if err != nil {
			return nil, err
		}
		if err := enc.Encode(n); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// floatText renders a float so it reads back as a float.
func floatText(f float64) (string, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("cannot encode %v", f)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !bytesContainAny(s, ".eE") {
		s += ".0"
	}
	return s, nil
}

func bytesContainAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

func writeJSON(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case object:
		buf.WriteByte('{')
		for i, f := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(f.key)
			buf.Write(k)
			buf.WriteByte(':')
			if err := writeJSON(buf, f.value); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case map[string]any:
		buf.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(t)) {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteByte(':')
			if err := writeJSON(buf, t[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, x); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case float64:
		s, err := floatText(t)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case float32:
		return writeJSON(buf, float64(t))
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func yamlNode(v any) (*yaml.Node, error) {
	switch t := v.(type) {
	case nil:
		return scalar("!!null", "null"), nil
	case object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, f := range t {
			val, err := yamlNode(f.value)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, scalar("!!str", f.key), val)
		}
		return n, nil
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			val, err := yamlNode(t[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, scalar("!!str", k), val)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, x := range t {
			val, err := yamlNode(x)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, val)
		}
		return n, nil
	case string:
		n := scalar("!!str", t)
		if bytesContainAny(t, "\n") {
			n.Style = yaml.LiteralStyle
		}
		return n, nil
	case bool:
		return scalar("!!bool", strconv.FormatBool(t)), nil
	case int:
		return scalar("!!int", strconv.Itoa(t)), nil
	case int64:
		return scalar("!!int", strconv.FormatInt(t, 10)), nil
	case float64:
		s, err := floatText(t)
		if err != nil {
			return nil, err
		}
		return scalar("!!float", s), nil
	case json.Number:
		if _, err := t.Int64(); err == nil {
			return scalar("!!int", t.String()), nil
		}
		return scalar("!!float", t.String()), nil
	default:
		// Anything else JSON-compatible: round-trip through JSON.
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		var generic any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			return nil, err
		}
		return yamlNode(generic)
	}
}
