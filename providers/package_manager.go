package providers

import (
	"context"
	"fmt"
	"os/exec"
)

// Package managers the package kind drives (PackageOptions.Manager).
const (
	PackageManagerAuto = "auto"
	PackageManagerApt  = "apt"
	PackageManagerDnf  = "dnf"
)

// packageManager is what the package kind asks of a host's package tools:
// apt-get and dpkg (aptManager) or dnf and rpm (dnfManager). The provider
// keeps the kind's semantics (diff, batches, undo); a manager only reads
// and changes packages.
type packageManager interface {
	// tool names the manager in messages and plans: "apt" or "dnf".
	tool() string
	// checkName and checkVersion refuse a name or an exact version the
	// manager's format does not allow (configuration errors, naming the
	// attribute).
	checkName(name string) error
	checkVersion(version string) error
	// query reads name's installed state from the package database.
	query(ctx context.Context, name string) (pkgStatus, error)
	// candidate is the version "latest" means: the newest the sources
	// offer, as last fetched (never refreshed here).
	candidate(ctx context.Context, name string) (string, error)
	// matches reports whether the installed version is the wanted one.
	matches(want, installed string) bool
	// install makes every want true in one transaction and returns the
	// tool's last lines of output.
	install(ctx context.Context, wants []pkgWant) (string, error)
	// remove removes name; purge also removes its configuration (where
	// the manager tells the two apart).
	remove(ctx context.Context, name string, purge bool) error
	// list lists installed packages, all or those named.
	list(ctx context.Context, names []string) ([]Listed, error)
	// createUndo is what undoing name's installation does, for plans.
	createUndo(name string, hadConfig bool) string
}

// pkgWant is one package an install transaction wants: version is "" (any
// version, the installed one kept), versionLatest or an exact version.
type pkgWant struct{ name, version string }

// pkgStatus is what the package database says of one package.
type pkgStatus struct {
	status  string // dpkg's status word: installed, config-files, ...; "" when unknown
	version string
}

// newPackageManager picks the manager o.Manager names. auto is apt where
// apt-get and dpkg-query are found, else dnf where dnf and rpm are, else
// apt (whose runs then fail naming the missing program). It costs a few
// PATH look-ups.
func newPackageManager(o PackageOptions) (packageManager, error) {
	switch o.Manager {
	case "", PackageManagerAuto:
		if found(o.AptGet, "apt-get") && found(o.DpkgQuery, "dpkg-query") {
			return newAptManager(o), nil
		}
		if found(o.Dnf, "dnf") && found(o.Rpm, "rpm") {
			return newDnfManager(o), nil
		}
		return newAptManager(o), nil
	case PackageManagerApt:
		return newAptManager(o), nil
	case PackageManagerDnf:
		return newDnfManager(o), nil
	}
	return nil, fmt.Errorf("package manager %q: want auto, apt or dnf", o.Manager)
}

// found reports whether the program (path, or else def) is in PATH.
func found(path, def string) bool {
	if path == "" {
		path = def
	}
	_, err := exec.LookPath(path)
	return err == nil
}
