package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// PackageOptions configure how the package kind drives the host's package
// manager. The zero value picks apt or dnf by what the host has and uses
// its own configuration and sources.
type PackageOptions struct {
	// Manager is auto (default), apt or dnf (see newPackageManager).
	Manager string
	// AptGet, AptCache and DpkgQuery are apt's programs (default: found
	// in PATH).
	AptGet, AptCache, DpkgQuery string
	// AptOptions are given to every apt-get and apt-cache run, before
	// the command: "-o", "Dir::Etc::SourceList=/srv/test.list" points apt
	// at other sources.
	AptOptions []string
	// Dnf and Rpm are dnf's programs (default: found in PATH).
	Dnf, Rpm string
	// Root, when set, is the install root of dnf and rpm: packages are
	// installed into and read from Root (dnf --installroot, rpm --root)
	// instead of the host.
	Root string
	// DnfOptions are given to every dnf run, before the command:
	// "--config=/srv/dnf.conf", "--setopt=reposdir=", "--releasever=40".
	DnfOptions []string
	// Timeout bounds one apt-get or dnf transaction (default 30 minutes).
	Timeout time.Duration
}

// packageProvider manages the host's packages through its package manager
// (apt-get and dpkg, or dnf and rpm: packageManager), as Puppet's package
// providers do: it never refreshes the sources' metadata, so "latest" is
// the newest version of the sources as last fetched. The packages of one
// unit that need a change are installed in one transaction (ApplyBatch)
// before each resource's own apply, which then only reads what the
// transaction left.
//
// Packages are the worker host's: a local node's root does not confine
// them (as it does not confine an exec's command).
//
// Undo removes a package the apply installed (apt purges it), or installs
// again the version a change replaced or a removal took away; that version
// must still be offered by the sources, or the undo fails as irreversible.
// Packages pulled in as dependencies are left as the manager leaves them;
// files a maintainer script changed are not restored.
type packageProvider struct {
	m packageManager
	// err is why no manager could be picked (an unknown Manager): every
	// call returns it.
	err error
}

// NewPackage returns the provider of kind package. An unknown o.Manager
// makes a provider whose every call fails, saying so.
func NewPackage(o PackageOptions) Provider {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	m, err := newPackageManager(o)
	return packageProvider{m: m, err: err}
}

func (packageProvider) Kind() string { return kinds.KindPackage }

var packageAttrs = map[string]kinds.AttrKind{
	"name":    kinds.Namevar,
	"ensure":  kinds.Property,
	"version": kinds.Property,
}

func (packageProvider) Attributes() map[string]kinds.AttrKind { return packageAttrs }

// versionLatest is the canonical version of ensure: latest.
const versionLatest = "latest"

// Canonicalize reduces ensure to present or absent; a wanted version
// (given as ensure, as in Puppet, or latest) goes into version, which the
// diff compares with the installed one.
func (p packageProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if p.err != nil {
		return nil, p.err
	}
	for k := range spec {
		if k != "name" && k != "ensure" {
			return nil, configErrorf(k, "unknown attribute of kind package (a version is given as ensure)")
		}
	}
	name, _, err := specString(spec, "name")
	if err != nil {
		return nil, err
	}
	if err := p.m.checkName(name); err != nil {
		return nil, err
	}
	ensure, _, err := specString(spec, "ensure")
	if err != nil {
		return nil, err
	}
	out := model.Spec{"name": name, "ensure": "present"}
	switch ensure {
	case "", "present", "installed":
	case "absent":
		out["ensure"] = "absent"
	case versionLatest:
		out["version"] = versionLatest
	default:
		if err := p.m.checkVersion(ensure); err != nil {
			return nil, err
		}
		out["version"] = ensure
	}
	return out, nil
}

// Read reports the installed package. Its version attribute is the
// wanted version when the installed one matches it ("latest" when want
// asks for latest and the installed version is the candidate), so that
// the diff shows "version 1.0 → latest" until it is.
func (p packageProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	if p.err != nil {
		return State{}, p.err
	}
	name, _ := want["name"].(string)
	if name == "" {
		name = env.ObjectID
	}
	if name == "" {
		return State{}, configErrorf("name", "required")
	}
	return p.readFresh(ctx, name, want)
}

func (p packageProvider) readFresh(ctx context.Context, name string, want model.Spec) (State, error) {
	st, err := p.m.query(ctx, name)
	if err != nil {
		return State{}, err
	}
	out := State{ID: name, Outputs: map[string]any{"name": name, "status": st.status}}
	if st.status != "installed" {
		return out, nil
	}
	out.Exists = true
	out.Outputs["version"] = st.version
	shown := st.version
	switch v, _ := want["version"].(string); {
	case v == versionLatest:
		cand, err := p.m.candidate(ctx, name)
		if err != nil {
			return State{}, err
		}
		if p.m.matches(cand, st.version) {
			shown = versionLatest
		}
	case v != "" && p.m.matches(v, st.version):
		shown = v
	}
	out.Attrs = map[string]any{"name": name, "ensure": "present", "version": shown}
	return out, nil
}

// satisfied reports whether st is what want asks for.
func satisfied(want model.Spec, st State) bool {
	if want["ensure"] == "absent" {
		return !st.Exists
	}
	v, ok := want["version"]
	return st.Exists && (!ok || st.Attrs["version"] == v)
}

// ApplyBatch installs every package items want in one transaction. A
// failure is returned; the caller then applies each item on its own, so
// that every resource reports its own error.
func (p packageProvider) ApplyBatch(ctx context.Context, _ Env, wants []model.Spec) error {
	if p.err != nil {
		return p.err
	}
	var ws []pkgWant
	for _, w := range wants {
		if w["ensure"] != "absent" {
			ws = append(ws, wantOf(w))
		}
	}
	if len(ws) == 0 {
		return nil
	}
	_, err := p.m.install(ctx, ws)
	return err
}

// wantOf is what an install transaction gets for a canonical spec.
func wantOf(want model.Spec) pkgWant {
	v, _ := want["version"].(string)
	return pkgWant{name: want["name"].(string), version: v}
}

// Apply installs, upgrades or downgrades the package, unless a batch
// already did (it reads the package database again first).
func (p packageProvider) Apply(ctx context.Context, _ Env, want model.Spec, _ State) (State, error) {
	if p.err != nil {
		return State{}, p.err
	}
	name := want["name"].(string)
	now, err := p.readFresh(ctx, name, want)
	if err != nil {
		return State{}, err
	}
	if satisfied(want, now) {
		return now, nil
	}
	log, err := p.m.install(ctx, []pkgWant{wantOf(want)})
	if err != nil {
		return State{}, err
	}
	after, err := p.readFresh(ctx, name, want)
	if err != nil {
		return State{}, err
	}
	if !satisfied(want, after) {
		return State{}, fmt.Errorf("%s left %s at %s, not %s", p.m.tool(), name, cmpStr(after.Outputs["version"], "nothing installed"), cmpStr(want["version"], "installed"))
	}
	after.Log = log
	return after, nil
}

// Delete removes the package (apt-get remove: its configuration files
// stay, as with Puppet's absent; dnf remove).
func (p packageProvider) Delete(ctx context.Context, _ Env, have State) error {
	if p.err != nil {
		return p.err
	}
	if have.ID == "" {
		return configErrorf("name", "required")
	}
	return p.m.remove(ctx, have.ID, false)
}

// Reversible: undo installs a replaced version again from the sources;
// whether they still offer it is known only then (see Compensate).
func (packageProvider) Reversible(model.Spec) bool { return true }

// UndoNote says what a rollback of the change cannot promise: a
// reinstall needs the sources to offer the old version still, and the
// packages pulled in as dependencies stay as the manager leaves them.
func (p packageProvider) UndoNote(want model.Spec, have State, action model.Action) string {
	if p.err != nil {
		return ""
	}
	name, _ := want["name"].(string)
	name = cmpStr(name, have.ID)
	old, _ := have.Outputs["version"].(string)
	switch {
	case action == model.ActionCreate:
		return p.m.createUndo(name, have.Outputs["status"] == "config-files")
	case old != "" && (action == model.ActionUpdate || action == model.ActionDelete):
		return "installs " + name + " " + old + " again, only while the sources still offer it"
	}
	return ""
}

// Compensate puts back the package state before the change: a package
// the change installed is removed (apt purges it, unless dpkg still held
// its configuration files before), a version it replaced or removed is
// installed again.
func (p packageProvider) Compensate(ctx context.Context, env Env, _ model.Spec, ch Change) error {
	if p.err != nil {
		return p.err
	}
	name := cmpStr(ch.Before.ID, env.ObjectID)
	if name == "" {
		return errors.New("the change names no package")
	}
	now, err := p.m.query(ctx, name)
	if err != nil {
		return err
	}
	if !ch.Before.Exists {
		if now.status == "" || now.status == "not-installed" || now.status == "config-files" && ch.Before.Outputs["status"] == "config-files" {
			return nil
		}
		return p.m.remove(ctx, name, ch.Before.Outputs["status"] != "config-files")
	}
	old, _ := ch.Before.Outputs["version"].(string)
	if old == "" || now.status == "installed" && now.version == old {
		return nil
	}
	if _, err := p.m.install(ctx, []pkgWant{{name: name, version: old}}); err != nil {
		return fmt.Errorf("reinstall %s %s (the sources may no longer offer it): %w: %w", name, old, ErrIrreversible, err)
	}
	// An install-only package (a kernel) keeps its newer instance: the
	// old one is there again, but is not what the host reads as installed.
	if now, err = p.m.query(ctx, name); err != nil {
		return err
	}
	if now.status != "installed" || now.version != old {
		return fmt.Errorf("reinstall %s %s: %s left %s at %s: %w", name, old, p.m.tool(), name, cmpStr(now.version, "nothing installed"), ErrIrreversible)
	}
	return nil
}

// List lists the installed packages by name (Puppet's `puppet resource
// package`): each exported with its installed version as ensure.
func (p packageProvider) List(ctx context.Context, _ Env, q ListQuery) ([]Listed, error) {
	if p.err != nil {
		return nil, p.err
	}
	for _, n := range q.Names {
		if err := p.m.checkName(n); err != nil {
			return nil, configErrorf("names", "%w", err)
		}
	}
	return p.m.list(ctx, q.Names)
}

// maxPackageList bounds the package list an export reads.
const maxPackageList = 16 << 20

// lastLines is the last n lines of s, trimmed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cmpStr is v as a string, or def when it is no non-empty string.
func cmpStr(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}
