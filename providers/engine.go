package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// Request is one resource for the engine to converge.
type Request struct {
	// Kind is the provider's kind (a derived catalogue kind's base).
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Spec is the resolved spec of the base kind: no references left.
	Spec model.Spec `json:"spec,omitempty"`
	Node Node       `json:"node"`
	// ObjectID is the id the stack recorded for the object, if any; a
	// delete whose spec is gone finds the object by it.
	ObjectID string `json:"objectId,omitempty"`
	// Delete removes the object (it left the package).
	Delete bool `json:"delete,omitempty"`
	// Noop reads and diffs but changes nothing.
	Noop bool `json:"noop,omitempty"`
	// Intent and Resumed are Env's: the change's key, and whether an
	// earlier attempt may have made it without recording it.
	Intent  string `json:"-"`
	Resumed bool   `json:"-"`
	// Secrets are the secret values the spec was resolved with: a
	// provider fingerprints what holds one with a keyed hash. Never
	// persisted.
	Secrets []string `json:"-"`
	// SkipGuards keeps a noop read from running commands to decide the
	// plan (an exec's unless and onlyif): a dry-run's default, since a
	// guard is a command like any other. Only with Noop.
	SkipGuards bool `json:"skipGuards,omitempty"`
	// Verbose asks kinds that run programs for more of their output (the
	// Deployster protocol's verbose flag).
	Verbose bool `json:"verbose,omitempty"`
	// TestPre and TestPost are a Fuel task's lifecycle checks: test_pre
	// runs before the read (exit 0: already done, nothing to do; not run
	// when Have is given, nor in a dry-run that runs no guards), test_post
	// after a change is made (non-zero: the change failed).
	TestPre  *model.TaskCheck `json:"testPre,omitempty"`
	TestPost *model.TaskCheck `json:"testPost,omitempty"`
	// Refresh says a resource the step subscribes to changed in this run:
	// a kind implementing Refresher reacts (an exec runs); others ignore it.
	Refresh bool `json:"refresh,omitempty"`
	// Have is the object's current state when the caller has just read it
	// (a noop Converge of the same request, whose Before it is): Converge
	// then diffs and applies against it instead of reading again. Nil
	// means read. It is never persisted.
	Have *State `json:"-"`
}

// Change is what one Converge did, or in noop would do. It is persisted
// for compensation, so it survives a JSON round trip.
type Change struct {
	// Action is what was (or, with Noop, would be) done.
	Action  model.Action       `json:"action"`
	Outcome model.Outcome      `json:"outcome"`
	Changes []model.AttrChange `json:"changes,omitempty"`
	Before  State              `json:"before"`
	After   State              `json:"after"`
	// Noop marks a change that was only reported, never made.
	Noop bool `json:"noop,omitempty"`
	// Irreversible marks a change compensation cannot undo (an exec that
	// ran without an undo command).
	Irreversible bool `json:"irreversible,omitempty"`
	// Refreshed marks a change that is (or, with Noop, would be) the
	// kind's reaction to a refresh, alone or after its own change.
	Refreshed bool `json:"refreshed,omitempty"`
	// Report is one Puppet-style line: "file/motd: content changed
	// {sha256}… → {sha256}…".
	Report string `json:"report"`
}

// ErrIrreversible is returned by compensating a change that cannot be
// undone; the change carried Irreversible.
var ErrIrreversible = errors.New("change cannot be undone")

// Converge brings one resource to its spec, in one call (mgmt's
// CheckApply): canonicalize the spec, read the current state, diff the two,
// and apply or delete unless Noop. A converged resource is left untouched,
// so running it twice is running it once. On failure the returned Change
// has Outcome failed and Before set when the read got that far.
func (r *Registry) Converge(ctx context.Context, req Request) (Change, error) {
	p, ok := r.Get(req.Kind)
	if !ok {
		return failedChange(strings.ToLower(req.Kind)+"/"+req.Name, Change{}, configErrorf("", "unknown kind %q", req.Kind))
	}
	title := strings.ToLower(req.Kind) + "/" + req.Name
	env := Env{Node: req.Node, Name: req.Name, ObjectID: req.ObjectID, Noop: req.Noop, Intent: req.Intent, Resumed: req.Resumed,
		SkipGuards: req.Noop && req.SkipGuards, Secrets: req.Secrets, Verbose: req.Verbose, fingerprintKey: r.fingerprintKey}
	planner, plans := p.(Planner)
	if req.Delete && plans {
		// Kinds that plan their own action (exec, structural) leave no
		// object behind, so removing one has nothing to delete.
		return Change{Action: model.ActionNoop, Outcome: model.OutcomeUnchanged, Noop: req.Noop, Report: title + ": unchanged"}, nil
	}
	want, err := r.canonical(p, req)
	if err != nil {
		return failedChange(title, Change{Noop: req.Noop}, err)
	}
	if done, err := testPre(ctx, req); err != nil {
		return failedChange(title, Change{Noop: req.Noop}, err)
	} else if done {
		return testPreDone(title, req.Noop), nil
	}
	have, err := r.read(ctx, p, env, want, req.Have)
	if err != nil {
		return failedChange(title, Change{Noop: req.Noop}, fmt.Errorf("read: %w", err))
	}
	ch := Change{Before: have, After: have, Noop: req.Noop}
	remove := req.Delete || want["ensure"] == "absent"
	switch {
	case plans:
		ch.Action = planner.Plan(want, have)
		if note := guardNote(have); note != "" && ch.Action != model.ActionNoop {
			ch.Changes = []model.AttrChange{{Path: "guard", New: note}}
		}
	case remove && !have.Exists:
		ch.Action = model.ActionNoop
	case remove:
		ch.Action = model.ActionDelete
		ch.Changes = r.deleteChanges(p, req.Kind, have)
	case !have.Exists:
		ch.Action = model.ActionCreate
		ch.Changes = r.createChanges(p, env, req.Kind, want)
	default:
		ch.Changes, err = r.diff(p, env, req.Kind, want, have)
		if err != nil {
			return failedChange(title, ch, err)
		}
		ch.Action = model.ActionUpdate
		if len(ch.Changes) == 0 {
			ch.Action = model.ActionNoop
		}
	}
	// own is the resource's own change; a refresh may come on top of it.
	own := ch.Action
	refresher, refresh := r.refresher(p, req, want, have, &ch)
	if note := guardNote(have); note != "" && refresh && own == model.ActionNoop {
		ch.Changes = append(ch.Changes, model.AttrChange{Path: "guard", New: note})
	}
	if note := testPreNote(req); note != "" && ch.Action != model.ActionNoop && ch.Action != "" {
		ch.Changes = append(ch.Changes, model.AttrChange{Path: "test_pre", New: note})
	}
	if ch.Action == model.ActionNoop || ch.Action == "" {
		ch.Action = model.ActionNoop
		ch.Outcome = model.OutcomeUnchanged
		ch.Report = title + ": unchanged" + skipReason(have)
		return ch, nil
	}
	if c, ok := p.(Compensator); ok && !c.Reversible(want) {
		ch.Irreversible = true
	}
	ch.Changes = append(ch.Changes, undoNote(p, want, have, ch.Action)...)
	if req.Noop {
		ch.Outcome = model.OutcomeUnchanged
		ch.Report = report(title, ch)
		return ch, nil
	}
	switch ch.Action {
	case model.ActionDelete:
		del := p.Delete
		if sd, ok := p.(SpecDeleter); ok {
			del = func(ctx context.Context, env Env, have State) error { return sd.DeleteSpec(ctx, env, want, have) }
		}
		if err := del(ctx, env, have); err != nil {
			return failedChange(title, ch, fmt.Errorf("delete: %w", err))
		}
		ch.After = State{ID: have.ID}
		ch.Outcome = model.OutcomeDeleted
	default:
		after := have
		if own != model.ActionNoop && own != "" {
			var err error
			if after, err = p.Apply(ctx, env, want, have); err != nil {
				if after.Exists || after.Outputs != nil {
					ch.After = after // what a failed run left: an exec's exit code and output
				}
				return failedChange(title, ch, fmt.Errorf("%s: %w", ch.Action, err))
			}
		}
		if refresh {
			var err error
			if after, err = refresher.Refresh(ctx, env, want, after); err != nil {
				if after.Exists || after.Outputs != nil {
					ch.After = after
				}
				return failedChange(title, ch, fmt.Errorf("refresh: %w", err))
			}
		}
		ch.After = after
		if err := testPost(ctx, req); err != nil {
			return failedChange(title, ch, err)
		}
		ch.Outcome = model.OutcomeUpdated
		if ch.Action == model.ActionCreate {
			ch.Outcome = model.OutcomeCreated
		}
		// An exec that ran changed something it does not describe: Puppet
		// counts it as a change, and so does the report, unless its exit
		// code said it changed nothing (unchangedReturns).
		if changed, ok := after.Outputs[changedOutput].(bool); ok && !changed {
			ch.Outcome = model.OutcomeUnchanged
		}
	}
	ch.Report = report(title, ch)
	return ch, nil
}

// refresher decides a refreshed request's reaction: when the kind
// implements Refresher and says it acts, ch is marked Refreshed and, if
// the resource's own change was none, takes the refresh's action.
func (r *Registry) refresher(p Provider, req Request, want model.Spec, have State, ch *Change) (Refresher, bool) {
	rf, ok := p.(Refresher)
	if !req.Refresh || req.Delete || !ok {
		return nil, false
	}
	action := rf.RefreshAction(want, have, ch.Action)
	if action == model.ActionNoop || action == "" {
		return nil, false
	}
	ch.Refreshed = true
	if ch.Action == model.ActionNoop || ch.Action == "" {
		ch.Action = action
		ch.Changes = append(ch.Changes, model.AttrChange{Path: "refresh", New: "a resource it subscribes to changed"})
	}
	return rf, true
}

// Compensate undoes ch, which Converge returned for req, from ch.Before:
// a created object is deleted, an updated one gets its previous attributes
// (a file its bytes and mode) back, a deleted one is recreated. A kind that
// implements Compensator undoes the change itself (exec runs undo).
// Compensation converges to the previous state, so it is idempotent; a
// noop or unchanged change needs none.
func (r *Registry) Compensate(ctx context.Context, req Request, ch Change) error {
	if ch.Noop || ch.Action == "" || ch.Action == model.ActionNoop || ch.Outcome == model.OutcomeUnchanged {
		return nil
	}
	p, ok := r.Get(req.Kind)
	if !ok {
		return configErrorf("", "unknown kind %q", req.Kind)
	}
	title := strings.ToLower(req.Kind) + "/" + req.Name
	if c, ok := p.(Compensator); ok {
		want, err := r.canonical(p, req)
		if err != nil {
			return fmt.Errorf("compensate %s: %w", title, err)
		}
		env := Env{Node: req.Node, Name: req.Name, ObjectID: cmp.Or(req.ObjectID, ch.After.ID, ch.Before.ID)}
		if err := c.Compensate(ctx, env, want, ch); err != nil {
			return fmt.Errorf("compensate %s: %w", title, err)
		}
		return nil
	}
	undo := Request{Kind: req.Kind, Name: req.Name, Node: req.Node}
	if !ch.Before.Exists {
		// It did not exist before: remove what the change created.
		undo.Spec = req.Spec
		undo.ObjectID = cmp.Or(ch.After.ID, ch.Before.ID, req.ObjectID)
		undo.Delete = true
	} else {
		spec, err := r.restoreSpec(p, req.Kind, ch.Before)
		if err != nil {
			return fmt.Errorf("compensate %s: %w", title, err)
		}
		undo.Spec = spec
		undo.ObjectID = cmp.Or(ch.Before.ID, req.ObjectID)
	}
	if _, err := r.Converge(ctx, undo); err != nil {
		return fmt.Errorf("compensate %s: %w", title, untitled(title, err))
	}
	return nil
}

// untitled is err without the "kind/name: " prefix Converge gives its
// errors, for a caller that names the object itself.
func untitled(title string, err error) error {
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), title+": ") {
		return inner
	}
	return err
}

// read is the object's current state: the caller's, when it has just read
// it, else the provider's answer.
func (r *Registry) read(ctx context.Context, p Provider, env Env, want model.Spec, have *State) (State, error) {
	if have != nil {
		return *have, nil
	}
	return p.Read(ctx, env, want)
}

// canonical normalizes and canonicalizes a request's spec. A delete whose
// spec is gone (the resource left the package) is found by ObjectID alone.
func (r *Registry) canonical(p Provider, req Request) (model.Spec, error) {
	spec := NormalizeSpec(req.Spec)
	if req.Delete && len(spec) == 0 {
		return spec, nil
	}
	want, err := p.Canonicalize(spec)
	if err != nil {
		if !IsConfigError(err) {
			err = &ConfigError{Err: err}
		}
		return nil, fmt.Errorf("invalid spec: %w", err)
	}
	return want, nil
}

// restoreSpec is the spec that recreates before.
func (r *Registry) restoreSpec(p Provider, kind string, before State) (model.Spec, error) {
	if rs, ok := p.(Restorer); ok {
		return rs.RestoreSpec(before)
	}
	spec := model.Spec{}
	for k, v := range before.Attrs {
		if r.attrKind(p, kind, k) != kinds.ReadOnly {
			spec[k] = v
		}
	}
	return spec, nil
}

// diff compares the attributes want sets with have's. Read-only and
// parameter attributes are ignored (they are not state the spec controls),
// as are the namevar (it chose the object) and an ensure of present or
// absent (existence decides create or delete); an ensure of the kind's own
// values (a service's running or stopped) is compared like a property. An
// init-only attribute that differs is an error.
func (r *Registry) diff(p Provider, env Env, kind string, want model.Spec, have State) ([]model.AttrChange, error) {
	var changes []model.AttrChange
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if k == "ensure" && (want[k] == "present" || want[k] == "absent") {
			// Presence decides the action; an ensure of other values
			// (a service's running or stopped) is a property.
			continue
		}
		ak := r.attrKind(p, kind, k)
		switch ak {
		case kinds.ReadOnly, kinds.Parameter, kinds.Namevar:
			continue
		}
		w := diffValue(p, env, want, k)
		h := have.Attrs[k]
		if EqualValues(w, h) {
			continue
		}
		if ak == kinds.InitOnly {
			return nil, configErrorf(k, "init-only attribute cannot change on an existing object (%s → %s); recreate the resource instead", showValue(h), showValue(w))
		}
		changes = append(changes, model.AttrChange{Path: k, Old: h, New: w})
	}
	return changes, nil
}

// createChanges lists what a create sets.
func (r *Registry) createChanges(p Provider, env Env, kind string, want model.Spec) []model.AttrChange {
	var changes []model.AttrChange
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if k == "ensure" {
			continue
		}
		switch r.attrKind(p, kind, k) {
		case kinds.ReadOnly, kinds.Parameter:
			continue
		}
		changes = append(changes, model.AttrChange{Path: k, New: diffValue(p, env, want, k)})
	}
	return changes
}

// deleteChanges lists what a delete removes.
func (r *Registry) deleteChanges(p Provider, kind string, have State) []model.AttrChange {
	var changes []model.AttrChange
	for _, k := range slices.Sorted(maps.Keys(have.Attrs)) {
		if k == "ensure" {
			continue
		}
		switch r.attrKind(p, kind, k) {
		case kinds.ReadOnly, kinds.Parameter:
			continue
		}
		changes = append(changes, model.AttrChange{Path: k, Old: have.Attrs[k]})
	}
	return changes
}

func diffValue(p Provider, env Env, want model.Spec, attr string) any {
	if dv, ok := p.(DiffValuer); ok {
		return dv.DiffValue(env, want, attr)
	}
	return want[attr]
}

func failedChange(title string, ch Change, err error) (Change, error) {
	ch.Outcome = model.OutcomeFailed
	ch.Report = title + ": failed: " + err.Error()
	return ch, fmt.Errorf("%s: %w", title, err)
}

// report renders the one-line account of a change.
func report(title string, ch Change) string {
	var b strings.Builder
	b.WriteString(title)
	b.WriteString(": ")
	would := ""
	if ch.Noop {
		would = "would "
	}
	switch ch.Action {
	case model.ActionCreate:
		b.WriteString(pick(ch.Noop, "would create", "created"))
	case model.ActionDelete:
		b.WriteString(pick(ch.Noop, "would delete", "deleted"))
	case model.ActionRun:
		b.WriteString(pick(ch.Noop, "would run", "ran"))
		if note := guardNote(ch.Before); note != "" {
			b.WriteString(strings.TrimPrefix(note, "would run"))
		}
		if code, ok := ch.After.Outputs["exitCode"]; ok && !ch.Noop {
			fmt.Fprintf(&b, " (exit %v)", code)
		}
		if ch.Outcome == model.OutcomeUnchanged && !ch.Noop {
			b.WriteString(", changed nothing")
		}
	case model.ActionUpdate:
		for i, c := range ch.Changes {
			if c.Path == undoNotePath {
				continue
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %schange%s %s → %s", c.Path, would, pick(ch.Noop, "", "d"), showValue(c.Old), showValue(c.New))
		}
	default:
		b.WriteString(string(ch.Action))
	}
	if ch.Noop {
		b.WriteString(" (noop)")
	}
	return b.String()
}

// guardNote is what a plan says of an exec whose guards were not run (a
// dry-run not asked to run them).
func guardNote(have State) string {
	s, _ := have.Outputs[guardNotRunOutput].(string)
	return s
}

// skipReason tells why a resource that plans its own action did nothing
// (an exec whose guard held).
func skipReason(have State) string {
	if s, ok := have.Outputs["skipped"].(string); ok && s != "" {
		return " (" + s + ")"
	}
	return ""
}

// showValue renders a value for a report line, shortened.
func showValue(v any) string {
	if v == nil {
		return "absent"
	}
	return nested.Cut(nested.Text(v), 80)
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// StateCompensator is a Compensator that also reports the state its undo
// left: an http object deleted by the change comes back with a new id.
type StateCompensator interface {
	CompensateState(ctx context.Context, env Env, want model.Spec, ch Change) (State, error)
}

// CompensateState is Compensate returning the state the undo left when the
// kind reports it (StateCompensator), so a recreated object's new id can be
// recorded; for other kinds the state is zero.
func (r *Registry) CompensateState(ctx context.Context, req Request, ch Change) (State, error) {
	if ch.Noop || ch.Action == "" || ch.Action == model.ActionNoop || ch.Outcome == model.OutcomeUnchanged {
		return State{}, nil
	}
	p, ok := r.Get(req.Kind)
	if !ok {
		return State{}, configErrorf("", "unknown kind %q", req.Kind)
	}
	sc, ok := p.(StateCompensator)
	if !ok {
		return State{}, r.Compensate(ctx, req, ch)
	}
	title := strings.ToLower(req.Kind) + "/" + req.Name
	want, err := r.canonical(p, req)
	if err != nil {
		return State{}, fmt.Errorf("compensate %s: %w", title, err)
	}
	env := Env{Node: req.Node, Name: req.Name, ObjectID: cmp.Or(req.ObjectID, ch.After.ID, ch.Before.ID)}
	st, err := sc.CompensateState(ctx, env, want, ch)
	if err != nil {
		return State{}, fmt.Errorf("compensate %s: %w", title, err)
	}
	return st, nil
}
