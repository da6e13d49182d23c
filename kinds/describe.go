package kinds

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Description is a kind or Fuel task type as `cairn kinds describe` and
// GET /v1/kinds/{name} show it (Puppet's `puppet describe`): what it is,
// its attributes with their kind, type and documentation, the automatic
// edges it adds and the task types mapped onto it.
type Description struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Type is "kind" (built in), "derived" (a kind described by data on a
	// base kind) or "task type" (a Fuel task type mapped onto Base).
	Type       string      `json:"type" yaml:"type"`
	Base       string      `json:"base,omitempty" yaml:"base,omitempty"`
	Structural bool        `json:"structural,omitempty" yaml:"structural,omitempty"`
	Attributes []Attribute `json:"attributes" yaml:"attributes"`
	AutoEdges  []AutoEdge  `json:"autoEdges,omitempty" yaml:"autoEdges,omitempty"`
	// Refresh is what a refreshed resource of the kind does (see
	// Kind.Refresh); empty: the kind ignores refreshes.
	Refresh   string   `json:"refresh,omitempty" yaml:"refresh,omitempty"`
	TaskTypes []string `json:"taskTypes,omitempty" yaml:"taskTypes,omitempty"`
	// Wrap and Defaults are a derived kind's: the base field its spec goes
	// into and the base spec it starts from.
	Wrap     string         `json:"wrap,omitempty" yaml:"wrap,omitempty"`
	Defaults map[string]any `json:"defaults,omitempty" yaml:"defaults,omitempty"`
}

// Attribute is one attribute of a Description.
type Attribute struct {
	Name string `json:"name" yaml:"name"`
	// Kind is namevar, property, parameter, read_only or init_only.
	Kind AttrKind `json:"kind" yaml:"kind"`
	// Type summarizes the attribute's JSON Schema: "string", "array of
	// integer", "number | string", "one of present, absent".
	Type     string `json:"type,omitempty" yaml:"type,omitempty"`
	Required bool   `json:"required,omitempty" yaml:"required,omitempty"`
	Default  any    `json:"default,omitempty" yaml:"default,omitempty"`
	Doc      string `json:"doc,omitempty" yaml:"doc,omitempty"`
}

// Description types.
const (
	TypeKind     = "kind"
	TypeDerived  = "derived"
	TypeTaskType = "task type"
)

// Describe documents a kind or task type, found case-insensitively.
func (c *Catalogue) Describe(name string) (Description, bool) {
	key := strings.ToLower(name)
	if e, ok := c.kinds[key]; ok {
		return c.describeKind(e), true
	}
	if t, ok := c.tasks[key]; ok {
		return c.describeTask(t), true
	}
	return Description{}, false
}

// DescribeAll documents every kind, then every task type, each sorted by
// name.
func (c *Catalogue) DescribeAll() []Description {
	out := make([]Description, 0, len(c.kinds)+len(c.tasks))
	for _, n := range c.Names() {
		d, _ := c.Describe(n)
		out = append(out, d)
	}
	for _, n := range c.TaskTypes() {
		d, _ := c.Describe(n)
		out = append(out, d)
	}
	return out
}

// DescribeError is the error for a name that is neither a kind nor a task
// type, with a did-you-mean when one is close.
func (c *Catalogue) DescribeError(name string) error { return c.unknown(name) }

func (c *Catalogue) describeKind(e *entry) Description {
	k := e.kind
	d := Description{
		Name: k.Name, Description: k.Description, Type: TypeKind, Base: k.Base, Structural: k.Structural,
		AutoEdges: k.AutoEdges, TaskTypes: append([]string(nil), k.TaskTypes...), Wrap: k.Wrap, Defaults: k.Defaults,
	}
	if k.Base != "" {
		d.Type = TypeDerived
		if base, ok := c.kinds[strings.ToLower(k.Base)]; ok {
			d.Refresh = base.kind.Refresh
		}
	} else {
		d.Refresh = k.Refresh
	}
	var schema map[string]any
	if e.validator != nil {
		schema, _ = e.validator.doc.(map[string]any)
	}
	d.Attributes = attributes(schema, func(attr string) AttrKind {
		if ak, ok := k.Attributes[attr]; ok {
			return ak
		}
		return Property
	}, k.Attributes)
	sort.Strings(d.TaskTypes)
	return d
}

// describeTask documents a task type's own parameters: each has the kind
// of the base kind's attribute of the same name, else parameter (it steers
// the mapping onto the base kind).
func (c *Catalogue) describeTask(t *taskType) Description {
	schema, _ := t.validator.doc.(map[string]any)
	base := c.kinds[t.base].kind
	d := Description{Name: t.name, Type: TypeTaskType, Base: base.Name}
	if title, _ := schema["title"].(string); title != "" {
		d.Description = title
	}
	d.Attributes = attributes(schema, func(attr string) AttrKind {
		if ak, ok := base.Attributes[attr]; ok {
			return ak
		}
		return Parameter
	}, nil)
	return d
}

// attributes lists the schema's properties and the declared attributes
// the schema does not name, sorted: namevars first, then by name.
func attributes(schema map[string]any, kindOf func(string) AttrKind, declared map[string]AttrKind) []Attribute {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if list, ok := schema["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	out := make([]Attribute, 0, len(props)+len(declared))
	for name, p := range props {
		ps, _ := p.(map[string]any)
		doc, _ := ps["description"].(string)
		out = append(out, Attribute{Name: name, Kind: kindOf(name), Type: schemaType(ps), Required: required[name], Default: jsonCompatible(ps["default"]), Doc: doc})
	}
	for name, ak := range declared {
		if _, ok := props[name]; !ok {
			out = append(out, Attribute{Name: name, Kind: ak})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if ni, nj := out[i].Kind == Namevar, out[j].Kind == Namevar; ni != nj {
			return ni
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// schemaType summarizes a JSON Schema in a few words.
func schemaType(s map[string]any) string {
	if s == nil {
		return ""
	}
	if enum, ok := s["enum"].([]any); ok {
		vals := make([]string, len(enum))
		for i, v := range enum {
			vals[i] = fmt.Sprint(v)
		}
		return "one of " + strings.Join(vals, ", ")
	}
	if v, ok := s["const"]; ok {
		return fmt.Sprintf("%v", v)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok {
			parts := make([]string, 0, len(alts))
			for _, a := range alts {
				am, _ := a.(map[string]any)
				if t := schemaType(am); t != "" && !slices.Contains(parts, t) {
					parts = append(parts, t)
				}
			}
			return strings.Join(parts, " | ")
		}
	}
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	for i, t := range types {
		switch t {
		case "array":
			if items, ok := s["items"].(map[string]any); ok {
				if it := schemaType(items); it != "" {
					types[i] = "array of " + it
				}
			}
		case "object":
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				if at := schemaType(ap); at != "" {
					types[i] = "object of " + at
				}
			}
		}
	}
	if len(types) == 0 {
		return "any"
	}
	return strings.Join(types, " | ")
}
