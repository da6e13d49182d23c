package providers

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/cairn-io/cairn/model"
)

// aptManager drives Debian packages with apt-get (install, upgrade,
// downgrade, remove) and reads them with dpkg-query and apt-cache, as
// Puppet's apt provider does: it never runs apt-get update, so "latest"
// is the newest version of the sources as last fetched.
type aptManager struct{ o PackageOptions }

func newAptManager(o PackageOptions) aptManager {
	if o.AptGet == "" {
		o.AptGet = "apt-get"
	}
	if o.AptCache == "" {
		o.AptCache = "apt-cache"
	}
	if o.DpkgQuery == "" {
		o.DpkgQuery = "dpkg-query"
	}
	return aptManager{o: o}
}

func (aptManager) tool() string { return "apt" }

var (
	debName    = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?$`)
	debVersion = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$`)
)

func (aptManager) checkName(name string) error {
	if !debName.MatchString(name) {
		return configErrorf("name", "want a Debian package name (lower case letters, digits, + - .), got %q", name)
	}
	return nil
}

func (aptManager) checkVersion(v string) error {
	if !debVersion.MatchString(v) {
		return configErrorf("ensure", "want present, installed, absent, latest or a Debian version, got %q", v)
	}
	return nil
}

// matches: dpkg's versions are compared as written.
func (aptManager) matches(want, installed string) bool { return want == installed }

// query asks dpkg-query for name's status and version.
func (m aptManager) query(ctx context.Context, name string) (pkgStatus, error) {
	res, err := runCommand(ctx, command{Argv: []string{m.o.DpkgQuery, "-W", "-f", "${db:Status-Status}\t${Version}\n", name}, Env: aptEnv(), Timeout: time.Minute})
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
func (m aptManager) candidate(ctx context.Context, name string) (string, error) {
	argv := append(append([]string{m.o.AptCache}, m.o.AptOptions...), "policy", name)
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

// install runs one apt-get install of name or name=version for each want
// (apt-get install upgrades a package to its candidate, so latest needs
// no version).
func (m aptManager) install(ctx context.Context, wants []pkgWant) (string, error) {
	args := make([]string, 0, len(wants))
	for _, w := range wants {
		if w.version != "" && w.version != versionLatest {
			args = append(args, w.name+"="+w.version)
		} else {
			args = append(args, w.name)
		}
	}
	return m.aptGet(ctx, "install", args...)
}

func (m aptManager) remove(ctx context.Context, name string, purge bool) error {
	verb := "remove"
	if purge {
		verb = "purge"
	}
	_, err := m.aptGet(ctx, verb, name)
	return err
}

func (aptManager) createUndo(name string, hadConfig bool) string {
	if hadConfig {
		return "removes " + name + " (its configuration files were there before); packages apt installs with it stay"
	}
	return "purges " + name + "; packages apt installs with it stay"
}

// list reads dpkg's installed packages, all or those named.
func (m aptManager) list(ctx context.Context, names []string) ([]Listed, error) {
	argv := []string{m.o.DpkgQuery, "-W", "-f", "${binary:Package}\t${db:Status-Status}\t${Version}\n"}
	argv = append(argv, names...)
	res, err := runCommand(ctx, command{Argv: argv, Env: aptEnv(), Timeout: time.Minute,
		Stdout: streamLimit{Head: maxPackageList}})
	if err != nil {
		return nil, fmt.Errorf("dpkg-query: %w", err)
	}
	if res.ExitCode > 1 || res.ExitCode == 1 && len(names) == 0 {
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
func (m aptManager) aptGet(ctx context.Context, verb string, args ...string) (string, error) {
	argv := append([]string{m.o.AptGet}, m.o.AptOptions...)
	argv = append(argv, "-q", "-y", "-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Lock::Timeout=60")
	if verb == "install" {
		argv = append(argv, "--allow-downgrades")
	}
	argv = append(argv, verb)
	argv = append(argv, args...)
	res, err := runCommand(ctx, command{Argv: argv, Env: aptEnv(), Timeout: m.o.Timeout})
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
