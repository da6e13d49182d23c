package providers

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-io/cairn/model"
)

// dnfManager drives RPM packages with dnf (install, upgrade, downgrade,
// remove: one `dnf install` of name-version specs changes versions either
// way) and reads them with rpm -q and dnf repoquery. Reads run dnf
// --cacheonly: a plan never fetches anything, and "latest" is the newest
// version in the repositories' metadata as last fetched. Transactions run
// with every repository's metadata_expire set to never: dnf downloads the
// packages but fetches metadata only for a repository it has none of, so
// an apply installs what its plan read. Refreshing the metadata (dnf
// makecache, or the host's dnf-makecache.timer) is the host's business, as
// apt-get update is on Debian.
//
// A version is [epoch:]version[-release]; the installed one matches it
// when their versions are equal and, where the wanted one gives them, their
// releases and epochs are equal too (Puppet's rpm provider's rule), each
// compared as written.
type dnfManager struct{ o PackageOptions }

func newDnfManager(o PackageOptions) dnfManager {
	if o.Dnf == "" {
		o.Dnf = "dnf"
	}
	if o.Rpm == "" {
		o.Rpm = "rpm"
	}
	return dnfManager{o: o}
}

func (dnfManager) tool() string { return "dnf" }

var (
	// rpmName is an RPM package name, perhaps with dnf's ".arch": letters,
	// digits and _ + . -, not starting with -, no glob characters.
	rpmName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_+.-]{0,254}$`)
	// rpmVersion is [epoch:]version[-release], starting with a digit.
	rpmVersion = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9._+~^]*(-[A-Za-z0-9._+~^]+)?$`)
)

func (dnfManager) checkName(name string) error {
	if !rpmName.MatchString(name) {
		return configErrorf("name", "want an RPM package name (letters, digits, _ + . -), got %q", name)
	}
	return nil
}

func (dnfManager) checkVersion(v string) error {
	if !rpmVersion.MatchString(v) {
		return configErrorf("ensure", "want present, installed, absent, latest or an RPM version ([epoch:]version[-release]), got %q", v)
	}
	return nil
}

// evr is an RPM version split: epoch and release are "" when not given.
type evr struct{ epoch, version, release string }

func parseEVR(s string) evr {
	var e evr
	if ep, rest, ok := strings.Cut(s, ":"); ok {
		e.epoch, s = ep, rest
	}
	e.version, e.release, _ = strings.Cut(s, "-")
	return e
}

// formatEVR is rpm's version as Cairn shows it: epoch: only when not 0.
func formatEVR(epoch, version, release string) string {
	s := version + "-" + release
	if epoch != "" && epoch != "0" && epoch != "(none)" {
		s = epoch + ":" + s
	}
	return s
}

// matches: the versions equal, and the releases and epochs where want
// gives them (an installed version without epoch has epoch 0).
func (dnfManager) matches(want, installed string) bool {
	w, h := parseEVR(want), parseEVR(installed)
	if h.epoch == "" {
		h.epoch = "0"
	}
	return w.version == h.version &&
		(w.release == "" || w.release == h.release) &&
		(w.epoch == "" || strings.TrimLeft(w.epoch, "0") == strings.TrimLeft(h.epoch, "0"))
}

// rpmQueryFormat is what rpm -q prints of each installed package.
const rpmQueryFormat = "%{NAME}\t%{EPOCHNUM}\t%{VERSION}\t%{RELEASE}\t%{INSTALLTIME}\n"

// rpmInstalled is one line of rpmQueryFormat.
type rpmInstalled struct {
	name, version string
	installed     int64
}

// rpmQuery runs rpm -q (all installed packages when names is empty) and
// parses what it printed; packages rpm does not know are left out.
func (m dnfManager) rpmQuery(ctx context.Context, names []string) ([]rpmInstalled, error) {
	argv := []string{m.o.Rpm}
	if m.o.Root != "" {
		argv = append(argv, "--root", m.o.Root)
	}
	argv = append(argv, "-q", "--qf", rpmQueryFormat)
	if len(names) == 0 {
		argv = append(argv, "-a")
	} else {
		argv = append(append(argv, "--"), names...)
	}
	res, err := runCommand(ctx, command{Argv: argv, Env: dnfEnv(), Timeout: time.Minute, Stdout: streamLimit{Head: maxPackageList}})
	if err != nil {
		return nil, fmt.Errorf("rpm -q: %w", err)
	}
	// rpm -q exits with the number of names it does not know.
	if res.ExitCode != 0 && (len(names) == 0 || res.ExitCode > len(names) || len(res.Stderr) > 0) {
		return nil, fmt.Errorf("rpm -q: exit %d: %s", res.ExitCode, lastLines(string(res.Stderr), 5))
	}
	if res.StdoutCut.Dropped > 0 {
		return nil, fmt.Errorf("rpm -q: more than %d bytes of packages: name the ones to export", maxPackageList)
	}
	var out []rpmInstalled
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			continue // "package X is not installed"
		}
		t, _ := strconv.ParseInt(f[4], 10, 64)
		out = append(out, rpmInstalled{name: f[0], version: formatEVR(f[1], f[2], f[3]), installed: t})
	}
	return out, nil
}

// query reads name from the rpm database. Of several installed instances
// (kernels, or one per architecture) it reports the one installed last.
func (m dnfManager) query(ctx context.Context, name string) (pkgStatus, error) {
	got, err := m.rpmQuery(ctx, []string{name})
	if err != nil {
		return pkgStatus{}, fmt.Errorf("package %s: %w", name, err)
	}
	if len(got) == 0 {
		return pkgStatus{}, nil
	}
	last := got[0]
	for _, g := range got[1:] {
		if g.installed >= last.installed {
			last = g
		}
	}
	return pkgStatus{status: "installed", version: last.version}, nil
}

// candidate asks dnf repoquery, from the metadata cache only, for the
// newest version of name the repositories offer.
func (m dnfManager) candidate(ctx context.Context, name string) (string, error) {
	res, err := m.dnf(ctx, time.Minute, "repoquery", "--cacheonly", "-q", "--available", "--latest-limit", "1",
		"--qf", "%{epoch}\t%{version}\t%{release}", "--", name)
	if err != nil {
		return "", fmt.Errorf("package %s: %w", name, err)
	}
	for _, l := range strings.Split(string(res), "\n") {
		if f := strings.Split(strings.TrimSpace(l), "\t"); len(f) == 3 {
			return formatEVR(f[0], f[1], f[2]), nil
		}
	}
	return "", fmt.Errorf("package %s: not in the dnf repositories (as last fetched)", name)
}

// noRefresh keeps a transaction on the metadata dnf has: no repository's
// cache expires (one with no cache at all is still fetched).
const noRefresh = "--setopt=*.metadata_expire=never"

// install runs one dnf install of name or name-version for each want;
// latest is the candidate, so that an installed package is upgraded (dnf
// install leaves an installed package as it is when no version is given).
func (m dnfManager) install(ctx context.Context, wants []pkgWant) (string, error) {
	specs := make([]string, 0, len(wants))
	byspec := make(map[string]pkgWant, len(wants))
	for _, w := range wants {
		v := w.version
		if v == versionLatest {
			var err error
			if v, err = m.candidate(ctx, w.name); err != nil {
				return "", err
			}
		}
		spec := dnfSpec(w.name, v)
		specs = append(specs, spec)
		byspec[spec] = w
	}
	out, err := m.dnf(ctx, m.o.Timeout, "install", append([]string{"-y", noRefresh, "--"}, specs...)...)
	if err != nil {
		return "", notOffered(err, byspec)
	}
	return lastLines(string(out), 20), nil
}

// rpmArches are the architectures dnf reads after a name's last dot.
var rpmArches = map[string]bool{
	"noarch": true, "x86_64": true, "i386": true, "i486": true, "i586": true, "i686": true,
	"aarch64": true, "armv7hl": true, "armv7hnl": true, "ppc64le": true, "ppc64": true,
	"s390x": true, "riscv64": true, "loongarch64": true,
}

// dnfSpec is what dnf install gets for name at version ("": any): name,
// name-version, or name-version.arch when name ends with an
// architecture (dnf reads a NEVRA with the architecture last).
func dnfSpec(name, version string) string {
	if version == "" {
		return name
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 && rpmArches[name[i+1:]] {
		return name[:i] + "-" + version + name[i:]
	}
	return name + "-" + version
}

// notOffered names the packages of a failed install dnf found no match
// for, before dnf's own words.
func notOffered(err error, byspec map[string]pkgWant) error {
	var missing []string
	for _, l := range strings.Split(err.Error(), "\n") {
		spec, ok := strings.CutPrefix(strings.TrimSpace(l), "No match for argument: ")
		if !ok {
			continue
		}
		w, known := byspec[strings.TrimSpace(spec)]
		switch {
		case !known:
		case w.version == "" || w.version == versionLatest:
			missing = append(missing, "package "+w.name+": not in the dnf repositories")
		default:
			missing = append(missing, "package "+w.name+": the dnf repositories offer no version "+w.version)
		}
	}
	if len(missing) == 0 {
		return err
	}
	return fmt.Errorf("%s: %w", strings.Join(missing, "; "), err)
}

// remove runs dnf remove: dependencies dnf installed for name and nothing
// else needs go with it when the host's dnf.conf says
// clean_requirements_on_remove (dnf's default). rpm has no separate
// configuration state: purge is remove.
func (m dnfManager) remove(ctx context.Context, name string, _ bool) error {
	_, err := m.dnf(ctx, m.o.Timeout, "remove", "-y", noRefresh, "--", name)
	return err
}

func (dnfManager) createUndo(name string, _ bool) string {
	return "removes " + name + " with dnf remove"
}

// list reads the rpm database's installed packages, all or those named,
// each by name with its version (of several instances, the one installed
// last); gpg-pubkey entries are keys, not packages.
func (m dnfManager) list(ctx context.Context, names []string) ([]Listed, error) {
	got, err := m.rpmQuery(ctx, names)
	if err != nil {
		return nil, err
	}
	last := map[string]rpmInstalled{}
	var order []string
	for _, g := range got {
		if g.name == "gpg-pubkey" {
			continue
		}
		prev, seen := last[g.name]
		if !seen {
			order = append(order, g.name)
		}
		if !seen || g.installed >= prev.installed {
			last[g.name] = g
		}
	}
	out := make([]Listed, 0, len(order))
	for _, n := range order {
		out = append(out, Listed{Name: n, Spec: model.Spec{"name": n, "ensure": last[n].version}})
	}
	return out, nil
}

// dnf runs `dnf [--installroot=Root] DnfOptions... verb args...` (dnf
// takes its options after the command too) and returns its output; a
// failure carries the last lines dnf wrote.
func (m dnfManager) dnf(ctx context.Context, timeout time.Duration, verb string, args ...string) ([]byte, error) {
	argv := []string{m.o.Dnf}
	if m.o.Root != "" {
		argv = append(argv, "--installroot="+m.o.Root)
	}
	argv = append(append(append(argv, m.o.DnfOptions...), verb), args...)
	res, err := runCommand(ctx, command{Argv: argv, Env: dnfEnv(), Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("dnf %s: %w", verb, err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("dnf %s: exit %d: %s", verb, res.ExitCode, lastLines(string(res.Stderr)+"\n"+string(res.Stdout), 8))
	}
	return res.Stdout, nil
}

// dnfEnv is the worker's environment with dnf's and rpm's messages
// untranslated.
func dnfEnv() []string {
	return append(os.Environ(), "LC_ALL=C")
}
