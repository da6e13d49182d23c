package model

import "time"

// Time is a UTC timestamp that renders as RFC 3339 with nanoseconds.
type Time = time.Time

// Stack records what applies of packages created (pkger).
type Stack struct {
	ID          string          `json:"id" yaml:"id"`
	Name        string          `json:"name" yaml:"name"`
	Description string          `json:"description,omitempty" yaml:"description,omitempty"`
	URLs        []string        `json:"urls" yaml:"urls"`
	CreatedAt   Time            `json:"createdAt" yaml:"createdAt"`
	UpdatedAt   Time            `json:"updatedAt" yaml:"updatedAt"`
	Resources   []StackResource `json:"resources" yaml:"resources"`
	// SnapshotHash is the package snapshot of the last apply that changed
	// something; empty before the first apply.
	SnapshotHash string `json:"snapshotHash,omitempty" yaml:"snapshotHash,omitempty"`
}

// StackResource is the record of one resource a stack manages.
type StackResource struct {
	APIVersion   string        `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	Kind         string        `json:"kind" yaml:"kind"`
	ID           string        `json:"id" yaml:"id"`
	PkgName      string        `json:"pkgName" yaml:"pkgName"`
	Node         string        `json:"node,omitempty" yaml:"node,omitempty"`
	Associations []Association `json:"associations,omitempty" yaml:"associations,omitempty"`
}

// Association is a recorded link to another resource of the stack.
type Association struct {
	Kind    string `json:"kind" yaml:"kind"`
	PkgName string `json:"pkgName" yaml:"pkgName"`
}

// Ref is the package identity of the recorded resource.
func (r StackResource) Ref() Ref { return Ref{Kind: r.Kind, Name: r.PkgName} }

// Snapshot is an immutable package or graph stored by content hash, so
// workflows carry the hash instead of the content.
type Snapshot struct {
	Hash      string `json:"hash"`
	Kind      string `json:"kind"` // "package" or "graph"
	Content   []byte `json:"-"`
	CreatedAt Time   `json:"createdAt"`
}
