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
	"maps"
	"os"
	"slices"
	"sync"

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
	// Log is what the change printed (an external program's actions),
	// bounded and not yet redacted: shown with the step's result, never
	// an output dependents read.
	Log string `json:"log,omitempty"`
}

// Env is the context one step runs in.
type Env struct {
	Node     Node
	Name     string // metadata.name or task id
	ObjectID string // the id recorded by the stack, if any
	Noop     bool   // read and diff, change nothing
	// Intent is a key unique to this change (one step of one execution),
	// the same on every attempt: a kind that creates objects sends it
	// along (an http create's Idempotency-Key), so a server can tell a
	// repeated create from a new one.
	Intent string
	// Resumed says an earlier attempt recorded its intent to create the
	// object and did not record the outcome: it may have been cut off
	// after the object was made. A kind whose objects get their id only
	// from the create looks for the one it made before creating another.
	Resumed bool
	// SkipGuards: a noop read must not run commands to decide the plan
	// (a dry-run that was not asked to run exec guards).
	SkipGuards bool
	// Secrets are the secret values the step's spec used: content holding
	// one is fingerprinted with a keyed hash (see fingerprint.go).
	Secrets []string
	// Verbose asks a program for more output (an apply's --verbose).
	Verbose bool
	// fingerprintKey is the registry's key for keyed fingerprints.
	fingerprintKey []byte
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

// Refresher reacts to a refresh: a resource the step subscribes to (or
// that notifies it) changed in this run (Puppet's refresh, mgmt's
// Refreshable). A kind without it ignores refreshes: the edge only orders.
type Refresher interface {
	// RefreshAction is what a refreshed resource does beyond its own
	// change, planned as action from want and the state read (have):
	// model.ActionNoop when the refresh asks nothing more (a guard holds,
	// or its own run already is its refresh), else the action it reports.
	// It must only decide, never change anything: a dry-run asks it too.
	RefreshAction(want model.Spec, have State, planned model.Action) model.Action
	// Refresh reacts, after the resource's own change (if any) left
	// after; it returns the state it leaves. Called only when
	// RefreshAction said so, and never in noop.
	Refresh(ctx context.Context, env Env, want model.Spec, after State) (State, error)
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
// reach a plan, a report or workflow history. want is the whole desired
// spec, env the step's (its secrets decide how content is fingerprinted).
type DiffValuer interface {
	DiffValue(env Env, want model.Spec, attr string) any
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

// DeferredSync collects what the file and directory writes made under it
// (see WithDeferredSync) left to make durable, so that a batch of writes
// pays for durability once instead of one file and one directory fsync per
// write. Its owner must call Sync before it reports or records any of the
// changes: until then they may not survive a crash.
type DeferredSync struct {
	mu    sync.Mutex
	files map[string]struct{}
	dirs  map[string]struct{}
}

// NewDeferredSync returns an empty DeferredSync.
func NewDeferredSync() *DeferredSync {
	return &DeferredSync{files: map[string]struct{}{}, dirs: map[string]struct{}{}}
}

func (d *DeferredSync) addFile(path string) {
	d.mu.Lock()
	d.files[path] = struct{}{}
	d.mu.Unlock()
}

func (d *DeferredSync) addDir(path string) {
	d.mu.Lock()
	d.dirs[path] = struct{}{}
	d.mu.Unlock()
}

// syncParallel bounds the fsyncs Sync has in flight: issued together, they
// share the filesystem's journal commits.
const syncParallel = 16

// Sync makes the recorded files, then the recorded directories (the
// renames into them), durable, each once, and forgets them. A file or
// directory removed since it was recorded has nothing left to sync.
//
// Where syncfsAtLeast or more of the files sit on one filesystem, that
// filesystem is synced whole instead (syncfs(2), one call), which makes
// them and their directories durable together: the journal commits once,
// not once per file. Its cost grows with whatever else on that filesystem
// is not yet written, which for a unit of many small files is far below
// that of one fsync each.
func (d *DeferredSync) Sync(ctx context.Context) error {
	d.mu.Lock()
	files, dirs := slices.Sorted(maps.Keys(d.files)), slices.Sorted(maps.Keys(d.dirs))
	d.files, d.dirs = map[string]struct{}{}, map[string]struct{}{}
	d.mu.Unlock()
	if len(files) >= syncfsAtLeast {
		var err error
		if files, dirs, err = syncFilesystems(ctx, files, dirs); err != nil {
			return err
		}
	}
	if err := syncAll(ctx, files); err != nil {
		return err
	}
	return syncAll(ctx, dirs)
}

// syncAll fsyncs paths, syncParallel at a time, and returns the first
// failure.
func syncAll(ctx context.Context, paths []string) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan string)
	for range min(syncParallel, len(paths)) {
		wg.Go(func() {
			for p := range next {
				if err := fsyncPath(ctx, p); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	return first
}

// fsyncPath syncs one file or directory; one that is gone is not an error.
func fsyncPath(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	observeSync(ctx, path)
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

type deferredSyncKey struct{}

type syncObserverKey struct{}

// WithDeferredSync returns a context under which file and directory
// providers skip their fsyncs and record in d what to sync instead.
func WithDeferredSync(ctx context.Context, d *DeferredSync) context.Context {
	return context.WithValue(ctx, deferredSyncKey{}, d)
}

// deferredSync is the DeferredSync ctx carries, or nil: sync at once.
func deferredSync(ctx context.Context) *DeferredSync {
	d, _ := ctx.Value(deferredSyncKey{}).(*DeferredSync)
	return d
}

// WithSyncObserver returns a context under which every fsync of a written
// file or directory calls fn with its path first, so that when and how
// often durability is paid for can be observed. A filesystem synced whole
// (see DeferredSync.Sync) calls fn once, with the directory its sync went
// through.
func WithSyncObserver(ctx context.Context, fn func(path string)) context.Context {
	return context.WithValue(ctx, syncObserverKey{}, fn)
}

func observeSync(ctx context.Context, path string) {
	if fn, ok := ctx.Value(syncObserverKey{}).(func(string)); ok {
		fn(path)
	}
}

// Effect is implemented by kinds whose change is an effect no read can
// see afterwards (a command run): making it twice is not making it once.
// A kind without it converges to a state it reads back (a file's bytes, an
// http object found by its intent), so repeating its change is safe.
type Effect interface {
	// RepeatUnsafe reports whether making the change want asks for again,
	// after an attempt that may have made it, could make it twice: false
	// when a guard decides again whether it runs (an exec's creates,
	// unless or onlyif).
	RepeatUnsafe(want model.Spec) bool
}
