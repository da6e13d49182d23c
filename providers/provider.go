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
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/kinds"
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

// The interfaces below are optional: a kind implements one only when the
// generic engine cannot do the job from attributes alone.

// Planner decides the action itself, for kinds whose state is not a set of
// attributes: exec's guards (read by Read) decide whether it runs.
type Planner interface {
	Plan(want model.Spec, have State) model.Action
}

// Compensator undoes a change itself instead of the engine restoring
// Change.Before: exec runs its undo command.
type Compensator interface {
	// Reversible reports whether a change made from want can be undone; a
	// change that cannot is marked Irreversible.
	Reversible(want model.Spec) bool
	Compensate(ctx context.Context, env Env, want model.Spec, ch Change) error
}

// Restorer builds the spec that recreates a previous state, for kinds that
// keep part of it outside Attrs (a file's bytes live in State.Private).
// Without it the engine restores Attrs minus read-only attributes.
type Restorer interface {
	RestoreSpec(before State) (model.Spec, error)
}

// DiffValuer gives the form in which a desired attribute is compared with
// the current one and shown in plans and reports, when the two differ in
// kind: a file's content is compared as its digest, so file bytes never
// reach a plan, a report or workflow history.
type DiffValuer interface {
	DiffValue(attr string, want any) any
}

// AttrDeclarer declares a kind's attribute kinds in code. The engine asks
// the catalogue first and falls back to this, so a kind works (and its
// read-only and parameter attributes stay out of diffs) even when the
// catalogue does not describe it.
type AttrDeclarer interface {
	Attributes() map[string]kinds.AttrKind
}

// SpecDeleter deletes with the spec at hand, for kinds whose State alone
// cannot reach the object (an external program's config may hold secrets,
// so no State keeps it). The engine calls it instead of Delete; want is
// empty when the resource left the package and only its id is known.
type SpecDeleter interface {
	DeleteSpec(ctx context.Context, env Env, want model.Spec, have State) error
}

// Lister enumerates existing objects for export (Puppet's get without
// names, or with a name filter).
type Lister interface {
	List(ctx context.Context, env Env, q ListQuery) ([]Listed, error)
}

// ConfigError is a failure that retrying cannot fix: an invalid spec, a
// change to an init-only attribute, a path that escapes its node's root.
// The executor marks it non-retryable.
type ConfigError struct {
	// Attr is the attribute at fault, when there is one.
	Attr string
	Err  error
}

func (e *ConfigError) Error() string {
	if e.Attr != "" {
		return e.Attr + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// IsConfigError reports whether err, or anything it wraps, is a ConfigError.
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

// configErrorf builds a ConfigError about attr ("" for the whole spec).
func configErrorf(attr, format string, args ...any) error {
	return &ConfigError{Attr: attr, Err: fmt.Errorf(format, args...)}
}
