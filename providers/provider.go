// Package providers implements the resource kinds, one file per kind, behind
// one interface in the spirit of mgmt's CheckApply and Puppet's get/set.
//
// The generic engine (Converge, Compensate) canonicalizes the desired spec,
// reads the current state, diffs the two while ignoring read-only and
// parameter attributes, refuses init-only changes, and applies, so each
// kind's file stays small.
package providers

import (
	"context"

	"github.com/cairn-io/cairn/model"
)

// State is what a provider read or left behind. It must survive a JSON
// round trip unchanged in meaning (it is persisted for compensation), so
// binary data is carried as []byte (base64 in JSON) and providers accept the
// decoded forms back.
type State struct {
	Exists bool `json:"exists"`
	// ID is the object's identity on the system (a file's absolute path, an
	// http object's id); it is what the stack record keeps.
	ID string `json:"id,omitempty"`
	// Attrs are the current attributes in canonical form, comparable with a
	// canonical spec.
	Attrs map[string]any `json:"attrs,omitempty"`
	// Outputs are exposed to dependents' expressions (file checksum, exec exit
	// code and stdout tail, http id and body, external state).
	Outputs map[string]any `json:"outputs,omitempty"`
	// Private holds what only the provider needs to restore the state
	// byte-exact (previous file bytes); never shown, never logged.
	Private []byte `json:"private,omitempty"`
}

// Env is the context one step runs in.
type Env struct {
	Node     Node
	Name     string // metadata.name or task id
	ObjectID string // the id recorded by the stack, if any
	Noop     bool   // read and diff, change nothing
}

// Provider implements one kind.
type Provider interface {
	Kind() string
	// Canonicalize returns the same value in one form, so equal things
	// compare equal (modes 644/"0644"/420, JSON key order, trailing slashes).
	Canonicalize(spec model.Spec) (model.Spec, error)
	// Read returns the current state of the object the spec names.
	Read(ctx context.Context, env Env, want model.Spec) (State, error)
	// Apply makes the object match want (create or update) and returns the
	// new state. It must be idempotent.
	Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error)
	// Delete removes the object. Deleting what is absent is not an error.
	Delete(ctx context.Context, env Env, have State) error
}
