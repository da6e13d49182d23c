package model

import (
	"strconv"
	"strings"
)

// APIVersion is the document version Cairn writes and expects.
const APIVersion = "cairn/v1"

// Ref names a resource inside a package: its kind and metadata.name. Kinds
// compare case-insensitively; Ref values built by the parser always carry the
// catalogue's spelling of the kind.
type Ref struct {
	Kind string `json:"kind" yaml:"kind"`
	Name string `json:"name" yaml:"name"`
}

// String renders the ref as "Kind/name", the form used in dependsOn.
func (r Ref) String() string { return r.Kind + "/" + r.Name }

// Key is the identity used for uniqueness: lower-cased kind plus name.
func (r Ref) Key() string { return strings.ToLower(r.Kind) + "/" + r.Name }

// ParseRef reads "Kind/name". ok is false when there is no slash.
func ParseRef(s string) (Ref, bool) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || kind == "" || name == "" {
		return Ref{}, false
	}
	return Ref{Kind: kind, Name: name}, true
}

// Spec is a resource's desired configuration as decoded from its document:
// JSON-compatible values only (map[string]any, []any, string, float64 or
// int64, bool, nil). It may hold references resolved when the step runs:
// {envRef: {key, default}}, {secretRef: {key}} and "{{ … }}" expressions.
type Spec = map[string]any

// Resource is one vertex of a package (pkger shape).
type Resource struct {
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	Kind       string `json:"kind" yaml:"kind"`
	Name       string `json:"name" yaml:"name"`
	Spec       Spec   `json:"spec,omitempty" yaml:"spec,omitempty"`
	// DependsOn lists explicit dependencies; Associations are pkger's label
	// associations, which are dependencies too and are recorded in the stack.
	DependsOn    []Ref `json:"dependsOn,omitempty" yaml:"dependsOn,omitempty"`
	Associations []Ref `json:"associations,omitempty" yaml:"associations,omitempty"`
	// Notify lists resources refreshed when this one changes (Puppet's
	// notify: they run after it); Subscribe lists resources whose change
	// refreshes this one (Puppet's subscribe: it runs after them).
	Notify    []Ref   `json:"notify,omitempty" yaml:"notify,omitempty"`
	Subscribe []Ref   `json:"subscribe,omitempty" yaml:"subscribe,omitempty"`
	Target    *Target `json:"target,omitempty" yaml:"target,omitempty"`
	Meta      Meta    `json:"meta,omitempty" yaml:"meta,omitempty"`
	// Pos is where the document of this resource starts.
	Pos Position `json:"-" yaml:"-"`
}

// Ref returns the resource's identity.
func (r *Resource) Ref() Ref { return Ref{Kind: r.Kind, Name: r.Name} }

// Target selects the nodes a resource runs on. Empty means the control plane.
type Target struct {
	Roles []string `json:"roles,omitempty" yaml:"roles,omitempty"`
	Nodes []string `json:"nodes,omitempty" yaml:"nodes,omitempty"`
}

// Meta are per-resource execution settings (mgmt's meta params), turned into
// Temporal retry policies and timeouts by the executor. Zero values mean the
// executor's defaults. Durations are Go duration strings ("30s").
type Meta struct {
	Retry   int    `json:"retry,omitempty" yaml:"retry,omitempty"`     // extra attempts; -1 = forever
	Delay   string `json:"delay,omitempty" yaml:"delay,omitempty"`     // initial retry interval
	Timeout string `json:"timeout,omitempty" yaml:"timeout,omitempty"` // per attempt
	Noop    bool   `json:"noop,omitempty" yaml:"noop,omitempty"`       // read and diff, never change
	// Idempotent declares the resource's change safe to repeat: a command
	// cut off by a crash before its outcome was recorded runs again
	// instead of waiting for a decision as a step whose outcome is
	// unknown (see docs/security.md).
	Idempotent bool `json:"idempotent,omitempty" yaml:"idempotent,omitempty"`
}

// Package is a parsed, validated set of resources: one or more documents
// that share a single namespace of Kind/name.
type Package struct {
	Name      string      `json:"name,omitempty" yaml:"name,omitempty"`
	Resources []*Resource `json:"resources" yaml:"resources"`
	// Sources lists the files or URLs the package was read from, in order.
	Sources []string `json:"sources,omitempty" yaml:"sources,omitempty"`
}

// Specs is every resource's spec keyed by its index, the shape
// expr.Required scans for the refs a package needs.
func (p *Package) Specs() map[string]any {
	specs := make(map[string]any, len(p.Resources))
	for i, r := range p.Resources {
		specs[strconv.Itoa(i)] = map[string]any(r.Spec)
	}
	return specs
}

// Lookup finds a resource by ref (kind compared case-insensitively).
func (p *Package) Lookup(r Ref) *Resource {
	key := r.Key()
	for _, res := range p.Resources {
		if res.Ref().Key() == key {
			return res
		}
	}
	return nil
}
