// Package kinds is the catalogue of resource kinds (Puppet's "type"): for
// each kind the JSON Schema of its spec, the kind of every attribute and the
// automatic edges it adds. Validation knows kinds only through this
// catalogue, so `cairn validate` works offline and kinds can be described by
// data; the implementations live in package providers.
package kinds

// AttrKind classifies an attribute the Puppet way.
type AttrKind string

const (
	// Namevar identifies the resource on the system (a file's path).
	Namevar AttrKind = "namevar"
	// ReadOnly attributes are reported by the system, never set; diffs ignore them.
	ReadOnly AttrKind = "read_only"
	// InitOnly attributes may be set at creation only; changing them later is an error.
	InitOnly AttrKind = "init_only"
	// Parameter attributes steer the provider but are not state (exec's
	// timeout, a file's template variables); diffs ignore them.
	Parameter AttrKind = "parameter"
	// Property is ordinary managed state, compared and applied.
	Property AttrKind = "property"
)

// AutoEdge declares that a resource of this kind relates to resources of
// kind Kind whose attribute Attr relates to its own attribute From: Match
// "parent-path" means From is a path under the other's Attr (a file inside a
// managed directory); "equal" means the values are equal.
//
// Direction says which runs first: "after" (the default, Puppet's
// autorequire) runs this resource after the other, "before" (autobefore)
// runs it before. Notify makes the edge refresh the one that runs later
// when the earlier one changes: with "after" this resource subscribes to
// the other (autosubscribe), with "before" it notifies it (autonotify).
type AutoEdge struct {
	Kind      string `json:"kind" yaml:"kind"`
	From      string `json:"from" yaml:"from"`
	Attr      string `json:"attr" yaml:"attr"`
	Match     string `json:"match" yaml:"match"`
	Direction string `json:"direction,omitempty" yaml:"direction,omitempty"`
	Notify    bool   `json:"notify,omitempty" yaml:"notify,omitempty"`
}

// Auto-edge directions.
const (
	DirectionAfter  = "after"
	DirectionBefore = "before"
)

// Before reports whether the resource declaring the edge runs first.
func (e AutoEdge) Before() bool { return e.Direction == DirectionBefore }

// Kind describes one resource kind.
type Kind struct {
	// Name is the catalogue spelling; lookups are case-insensitive.
	Name        string              `json:"name" yaml:"name"`
	Description string              `json:"description,omitempty" yaml:"description,omitempty"`
	Schema      []byte              `json:"schema" yaml:"schema"` // JSON Schema of spec
	Attributes  map[string]AttrKind `json:"attributes,omitempty" yaml:"attributes,omitempty"`
	AutoEdges   []AutoEdge          `json:"autoEdges,omitempty" yaml:"autoEdges,omitempty"`
	// Base names the built-in kind that implements a kind described by data
	// (for example an "http" object kind "Label"); Defaults are merged under
	// each resource's spec before validation against Base's schema.
	Base     string         `json:"base,omitempty" yaml:"base,omitempty"`
	Defaults map[string]any `json:"defaults,omitempty" yaml:"defaults,omitempty"`
	// Wrap names the base spec field the resource's own spec goes into (an
	// http kind "Label" puts its spec in the request "body").
	Wrap string `json:"wrap,omitempty" yaml:"wrap,omitempty"`
	// Associations says how pkger associations of a derived http kind become
	// links on the object (POST {object}{Path} {Field: id}).
	Associations *LinkSpec `json:"associations,omitempty" yaml:"associations,omitempty"`
	// Structural kinds (group, stage, skipped) order steps and change nothing.
	Structural bool `json:"structural,omitempty" yaml:"structural,omitempty"`
	// Refresh says what a resource of the kind does when refreshed (a
	// resource it subscribes to, or that notifies it, changed); empty: the
	// kind ignores refreshes. A derived kind reacts as its base does.
	Refresh string `json:"refresh,omitempty" yaml:"refresh,omitempty"`
	// TaskTypes are Fuel task types mapped to this kind ("shell" → exec).
	TaskTypes []string `json:"taskTypes,omitempty" yaml:"taskTypes,omitempty"`
	// Verbatim names attributes that are templates of their own (a file's
	// template, rendered with its vars): expression resolution must copy
	// them unrendered (pass them as expr.Context.Verbatim) and whoever
	// writes the file renders them with expr.Render.
	Verbatim []string `json:"verbatim,omitempty" yaml:"verbatim,omitempty"`
	// Aliases marks a kind whose DepAliasAttr attribute names dependencies
	// by alias (Deployster's dependencies: {disk: my_data_disk}): each is
	// an edge, and the step reads the target's applied state as
	// .deps.ALIAS ({name, type, state}).
	Aliases bool `json:"aliases,omitempty" yaml:"aliases,omitempty"`
}

// LinkSpec describes sub-objects linking an http object to others (pkger
// label mappings): listed by GET {object}{Path}, added by POST {Field: id},
// removed by DELETE {object}{Path}/{id}.
type LinkSpec struct {
	Path  string `json:"path" yaml:"path"`
	Field string `json:"field" yaml:"field"`
}
