package providers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// PackageOptions configure how the package kind drives apt and dpkg. The
// zero value uses the host's own apt configuration and sources.
type PackageOptions struct {
	// AptGet, AptCache and DpkgQuery are the programs (default: found in
	// PATH).
	AptGet, AptCache, DpkgQuery string
	// AptOptions are given to every apt-get and apt-cache run, before
	// the command: "-o", "Dir::Etc::SourceList=/srv/test.list" points apt
	// at other sources.
	AptOptions []string
	// Timeout bounds one apt-get run (default 30 minutes).
	Timeout time.Duration
}

// packageProvider manages Debian packages through apt-get (install,
// upgrade, downgrade, remove) and reads them with dpkg-query and
// apt-cache, as Puppet's apt provider does: it never runs apt-get
// update, so "latest" is the newest version of the sources as last
// fetched. The packages of one unit that need a change are installed in
// one apt-get transaction (ApplyBatch) before each resource's own apply,
// which then only reads what the transaction left.
//
// Packages are the worker host's: a local node's root does not confine
// them (as it does not confine an exec's command).
//
// Undo removes (purges) a package the apply installed, or installs again
// the version a change replaced or a removal took away; that version must
// still be offered by the sources, or the undo fails as irreversible.
// Packages apt pulled in as dependencies stay, marked automatically
// installed (apt-get autoremove removes them); files a maintainer script
// changed are not restored.
type packageProvider struct{ o PackageOptions }

// NewPackage returns the provider of kind package.
func NewPackage(o PackageOptions) Provider {
	if o.AptGet == "" {
		o.AptGet = "apt-get"
	}
	if o.AptCache == "" {
		o.AptCache = "apt-cache"
	}
	if o.DpkgQuery == "" {
		o.DpkgQuery = "dpkg-query"
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	return packageProvider{o: o}
}

func (packageProvider) Kind() string { return kinds.KindPackage }

var packageAttrs = map[string]kinds.AttrKind{
	"name":    kinds.Namevar,
	"ensure":  kinds.Property,
	"version": kinds.Property,
}

func (packageProvider) Attributes() map[string]kinds.AttrKind { return packageAttrs }

var (
	packageName    = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?$`)
	packageVersion = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$`)
)

// versionLatest is the canonical version of ensure: latest.
const versionLatest = "latest"

// Canonicalize reduces ensure to present or absent; a wanted version
// (given as ensure, as in Puppet, or latest) goes into version, which the
// diff compares with the installed one.
func (packageProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	for k := range spec {
		if k != "name" && k != "ensure" {
			return nil, configErrorf(k, "unknown attribute of kind package (a version is given as ensure)")
		}
	}
	name, ok, err := specString(spec, "name")
	if err != nil {
		return nil, err
	}
	if !ok || !packageName.MatchString(name) {
		return nil, configErrorf("name", "want a Debian package name (lower case letters, digits, + - .), got %q", name)
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
		if !packageVersion.MatchString(ensure) {
			return nil, configErrorf("ensure", "want present, installed, absent, latest or a Debian version, got %q", ensure)
		}
		out["version"] = ensure
	}
	return out, nil
}

// pkgStatus is what dpkg says of one package.
type pkgStatus struct {
	status  string // dpkg's status word: installed, config-files, ...; "" when unknown to dpkg
	version string
}

// query asks dpkg-query for name's status and version.
func (p packageProvider) query(ctx context.Context, name string) (pkgStatus, error) {
	res, err := runCommand(ctx, command{Argv: []string{p.o.DpkgQuery, "-W", "-f", "${db:Status-Status}\t${Version}\n", name}, Env: aptEnv(), Timeout: time.Minute})
	if err != nil {
		return pkgStatus{}, fmt.Errorf("dpkg-query %s: %w", name, err)
	}
	if res.ExitCode == 1 {
		return pkgStatus{}, nil // no such package known to dpkg
	}
	if res.ExitCode != 0 {
		return pkgStatus{}, fmt.Errorf("dpkg-query %s: exit %d: %s", name, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	line, _, _ := strings.Cut(string(res.Stdout), "\n")
	st, ver, _ := strings.Cut(line, "\t")
	return pkgStatus{status: st, version: ver}, nil
}

// candidate is the version apt would install for name.
func (p packageProvider) candidate(ctx context.Context, name string) (string, error) {
	argv := append(append([]string{p.o.AptCache}, p.o.AptOptions...), "policy", name)
	res, err := runCommand(ctx, command{Argv: argv, Env: aptEnv(), Timeout: time.Minute})
	if err != nil {
		return "", fmt.Errorf("apt-cache policy %s: %w", name, err)
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("apt-cache policy %s: exit %d: %s", name, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Candidate:"); ok {
			if v = strings.TrimSpace(v); v != "" && v != "(none)" {
				return v, nil
			}
		}
	}
	return "", fmt.Errorf("package %s: no version of it in the apt sources", name)
}

// Read reports the installed package. Its version attribute is "latest"
// when want asks for latest and the installed version is the candidate,
// so that the diff shows "version 1.0 → latest" until it is.
func (p packageProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	name, _ := want["name"].(string)
	if name == "" {
		name = env.ObjectID
	}
	if name == "" {
		return State{}, configErrorf("name", "required")
	}
	st, err := p.query(ctx, name)
	if err != nil {
		return State{}, err
	}
	return p.state(ctx, name, st, want)
}

func (p packageProvider) state(ctx context.Context, name string, st pkgStatus, want model.Spec) (State, error) {
	out := State{ID: name, Outputs: map[string]any{"name": name, "status": st.status}}
	if st.status != "installed" {
		return out, nil
	}
	out.Exists = true
	out.Outputs["version"] = st.version
	shown := st.version
	if want["version"] == versionLatest {
		cand, err := p.candidate(ctx, name)
		if err != nil {
			return State{}, err
		}
		if cand == st.version {
			shown = versionLatest
		}
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

// ApplyBatch installs every package items want in one apt-get
// transaction. A failure is returned; the caller then applies each item
// on its own, so that every resource reports its own error.
func (p packageProvider) ApplyBatch(ctx context.Context, _ Env, wants []model.Spec) error {
	var args []string
	for _, w := range wants {
		if w["ensure"] != "absent" {
			args = append(args, installArg(w))
		}
	}
	if len(args) == 0 {
		return nil
	}
	_, err := p.aptGet(ctx, "install", args...)
	return err
}

// installArg names what apt-get install gets for want: name, or
// name=version.
func installArg(want model.Spec) string {
	name := want["name"].(string)
	if v, ok := want["version"].(string); ok && v != versionLatest {
		return name + "=" + v
	}
	return name
}

// Apply installs, upgrades or downgrades the package, unless a batch
// already did (it reads dpkg again first).
func (p packageProvider) Apply(ctx context.Context, _ Env, want model.Spec, _ State) (State, error) {
	name := want["name"].(string)
	now, err := p.readFresh(ctx, name, want)
	if err != nil {
		return State{}, err
	}
	if satisfied(want, now) {
		return now, nil
	}
	log, err := p.aptGet(ctx, "install", installArg(want))
	if err != nil {
		return State{}, err
	}
	after, err := p.readFresh(ctx, name, want)
	if err != nil {
		return State{}, err
	}
	if !satisfied(want, after) {
		return State{}, fmt.Errorf("apt-get left %s at %s, not %s", name, cmpStr(after.Outputs["version"], "nothing installed"), cmpStr(want["version"], "installed"))
	}
	after.Log = log
	return after, nil
}

func (p packageProvider) readFresh(ctx context.Context, name string, want model.Spec) (State, error) {
	st, err := p.query(ctx, name)
	if err != nil {
		return State{}, err
	}
	return p.state(ctx, name, st, want)
}

// Delete removes the package (apt-get remove: its configuration files
// stay, as with Puppet's absent).
func (p packageProvider) Delete(ctx context.Context, _ Env, have State) error {
	if have.ID == "" {
		return configErrorf("name", "required")
	}
	_, err := p.aptGet(ctx, "remove", have.ID)
	return err
}

// Reversible: undo installs a replaced version again from the sources;
// whether they still offer it is known only then (see Compensate).
func (packageProvider) Reversible(model.Spec) bool { return true }

// UndoNote says what a rollback of the change cannot promise: a
// reinstall needs the sources to offer the old version still, and the
// packages apt pulls in as dependencies stay.
func (packageProvider) UndoNote(want model.Spec, have State, action model.Action) string {
	name, _ := want["name"].(string)
	name = cmpStr(name, have.ID)
	old, _ := have.Outputs["version"].(string)
	switch {
	case action == model.ActionCreate && have.Outputs["status"] == "config-files":
		return "removes " + name + " (its configuration files were there before); packages apt installs with it stay"
	case action == model.ActionCreate:
		return "purges " + name + "; packages apt installs with it stay"
	case old != "" && (action == model.ActionUpdate || action == model.ActionDelete):
		return "installs " + name + " " + old + " again, only while the sources still offer it"
	}
	return ""
}

// Compensate puts back the package state before the change: a package
// the change installed is purged (removed, when dpkg still held its
// configuration files before), a version it replaced or removed is
// installed again.
func (p packageProvider) Compensate(ctx context.Context, env Env, _ model.Spec, ch Change) error {
	name := cmpStr(ch.Before.ID, env.ObjectID)
	if name == "" {
		return errors.New("the change names no package")
	}
	now, err := p.query(ctx, name)
	if err != nil {
		return err
	}
	if !ch.Before.Exists {
		if now.status == "" || now.status == "not-installed" || now.status == "config-files" && ch.Before.Outputs["status"] == "config-files" {
			return nil
		}
		verb := "purge"
		if ch.Before.Outputs["status"] == "config-files" {
			verb = "remove"
		}
		_, err := p.aptGet(ctx, verb, name)
		return err
	}
	old, _ := ch.Before.Outputs["version"].(string)
	if old == "" || now.status == "installed" && now.version == old {
		return nil
	}
	if _, err := p.aptGet(ctx, "install", name+"="+old); err != nil {
		return fmt.Errorf("reinstall %s %s (the sources may no longer offer it): %w: %w", name, old, ErrIrreversible, err)
	}
	return nil
}

// List lists the installed packages by name (Puppet's `puppet resource
// package`): each exported with its installed version as ensure.
func (p packageProvider) List(ctx context.Context, _ Env, q ListQuery) ([]Listed, error) {
	for _, n := range q.Names {
		if !packageName.MatchString(n) {
			return nil, configErrorf("names", "want Debian package names, got %q", n)
		}
	}
	argv := []string{p.o.DpkgQuery, "-W", "-f", "${binary:Package}\t${db:Status-Status}\t${Version}\n"}
	argv = append(argv, q.Names...)
	res, err := runCommand(ctx, command{Argv: argv, Env: aptEnv(), Timeout: time.Minute,
		Stdout: streamLimit{Head: maxPackageList}})
	if err != nil {
		return nil, fmt.Errorf("dpkg-query: %w", err)
	}
	if res.ExitCode > 1 || res.ExitCode == 1 && len(q.Names) == 0 {
		return nil, fmt.Errorf("dpkg-query: exit %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	if res.StdoutCut.Dropped > 0 {
		return nil, fmt.Errorf("dpkg-query: more than %d bytes of packages: name the ones to export", maxPackageList)
	}
	var out []Listed
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[1] != "installed" {
			continue
		}
		name := strings.TrimSuffix(f[0], ":"+hostArch())
		out = append(out, Listed{Name: name, Spec: model.Spec{"name": name, "ensure": f[2]}})
	}
	return out, nil
}

// maxPackageList bounds the package list an export reads.
const maxPackageList = 16 << 20

// hostArch is dpkg's name of the architecture the worker was built for:
// a package of it is exported without the ":arch" suffix.
func hostArch() string {
	switch runtime.GOARCH {
	case "386":
		return "i386"
	case "arm":
		return "armhf"
	case "ppc64le":
		return "ppc64el"
	case "mips64le":
		return "mips64el"
	}
	return runtime.GOARCH
}

// aptGet runs apt-get non-interactively, keeping existing configuration
// files on upgrade (Puppet's --force-confold), waiting up to a minute for
// another apt or dpkg to release its lock. It returns apt's output.
func (p packageProvider) aptGet(ctx context.Context, verb string, args ...string) (string, error) {
	argv := append([]string{p.o.AptGet}, p.o.AptOptions...)
	argv = append(argv, "-q", "-y", "-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Lock::Timeout=60")
	if verb == "install" {
		argv = append(argv, "--allow-downgrades")
	}
	argv = append(argv, verb)
	argv = append(argv, args...)
	res, err := runCommand(ctx, command{Argv: argv, Env: aptEnv(), Timeout: p.o.Timeout})
	if err != nil {
		return "", fmt.Errorf("apt-get %s: %w", verb, err)
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("apt-get %s %s: exit %d: %s", verb, strings.Join(args, " "), res.ExitCode, lastLines(string(res.Stderr), 5))
	}
	return lastLines(string(res.Stdout), 20), nil
}

// aptEnv is the worker's environment with apt made non-interactive and
// its messages untranslated.
func aptEnv() []string {
	return append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C", "APT_LISTCHANGES_FRONTEND=none")
}

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
