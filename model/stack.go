package model

import (
	"encoding/json"
	"time"
)

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
	// SnapshotHash is the package snapshot of the last successful apply
	// (whether or not it changed anything); empty before the first apply.
	// The next apply reads removed resources' specs from it.
	SnapshotHash string `json:"snapshotHash,omitempty" yaml:"snapshotHash,omitempty"`
	// LastExecutionID is the execution that last wrote the record (an
	// apply or destroy); empty before the first. An approved plan is
	// refused when it is not the one the plan was made against.
	LastExecutionID string `json:"lastExecutionId,omitempty" yaml:"lastExecutionId,omitempty"`
	// ClusterID is the cluster the last successful apply ran on: the
	// stack's targeted resources are on its nodes. Empty when that apply
	// named no cluster, and once a destroy left nothing.
	ClusterID string `json:"clusterId,omitempty" yaml:"clusterId,omitempty"`
}

// StackResource is the record of one resource a stack manages.
type StackResource struct {
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	Kind       string `json:"kind" yaml:"kind"`
	ID         string `json:"id" yaml:"id"`
	PkgName    string `json:"pkgName" yaml:"pkgName"`
	Node       string `json:"node,omitempty" yaml:"node,omitempty"`
	// Associations is nil when the resource never had any (the key is left
	// out) and empty when they were removed (rendered as []), as pkger's
	// stack records show.
	Associations []Association `json:"associations,omitempty" yaml:"associations,omitempty"`
}

// MarshalJSON keeps the nil/empty distinction of Associations.
func (r StackResource) MarshalJSON() ([]byte, error) {
	type plain StackResource
	if r.Associations != nil && len(r.Associations) == 0 {
		return json.Marshal(struct {
			plain
			Associations []Association `json:"associations"`
		}{plain(r), []Association{}})
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON restores an explicit empty Associations list, in one pass:
// "associations": [] decodes into a non-nil empty slice.
func (r *StackResource) UnmarshalJSON(b []byte) error {
	type plain StackResource
	var p struct {
		plain
		Associations *[]Association `json:"associations"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = StackResource(p.plain)
	if p.Associations != nil {
		r.Associations = *p.Associations
		if r.Associations == nil {
			r.Associations = []Association{}
		}
	}
	return nil
}

// Association is a recorded link to another resource of the stack.
type Association struct {
	Kind    string `json:"kind" yaml:"kind"`
	PkgName string `json:"pkgName" yaml:"pkgName"`
}

// Snapshot is an immutable package or graph stored by content hash, so
// workflows carry the hash instead of the content.
type Snapshot struct {
	Hash      string `json:"hash"`
	Kind      string `json:"kind"` // "package" or "graph"
	Content   []byte `json:"-"`
	CreatedAt Time   `json:"createdAt"`
}
