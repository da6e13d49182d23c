package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// AptRepo is a local apt repository a test builds from .deb files it
// makes, and the apt configuration that makes apt see it and nothing
// else: the machine's own sources, lists, caches and automatic-install
// marks are never read or written. Packages are installed into the
// machine's real dpkg database (the test must run as root).
type AptRepo struct {
	Dir string
	// Options are apt's "-o" options for the repository.
	Options []string
	// Config is the same as an apt configuration file, for APT_CONFIG:
	// apt run by a worker of the test reads it instead of the machine's.
	Config string
	// AptGet is the real apt-get behind a script that logs each run's
	// arguments, so that a test counts transactions instead of assuming
	// them.
	AptGet string
	log    string
}

// NeedApt skips (fails under CAIRN_REQUIRE_ALL) when packages cannot be
// built and installed here.
func NeedApt(t testing.TB) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg", "dpkg-query", "dpkg-deb", "dpkg-scanpackages"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
		t.Fatalf("package tests need %v (CAIRN_REQUIRE_ALL is set)", missing)
	}
	t.Skipf("package tests need %v", missing)
}

// NewAptRepo makes an empty repository (see NeedApt).
func NewAptRepo(t testing.TB) *AptRepo {
	t.Helper()
	NeedApt(t)
	dir := t.TempDir()
	for _, d := range []string{"pool", "parts", "lists/partial", "cache/archives/partial", "state", "bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	list := filepath.Join(dir, "sources.list")
	require.NoError(t, os.WriteFile(list, []byte("deb [trusted=yes] file:"+filepath.Join(dir, "pool")+" ./\n"), 0o644))
	r := &AptRepo{Dir: dir, log: filepath.Join(dir, "apt-get.log"), AptGet: filepath.Join(dir, "bin", "apt-get")}
	settings := [][2]string{
		{"Dir::Etc::SourceList", list},
		{"Dir::Etc::SourceParts", filepath.Join(dir, "parts")},
		{"Dir::State::Lists", filepath.Join(dir, "lists")},
		{"Dir::State::extended_states", filepath.Join(dir, "state", "extended_states")},
		{"Dir::Cache", filepath.Join(dir, "cache")},
		{"Acquire::Languages", "none"},
	}
	var conf strings.Builder
	for _, s := range settings {
		r.Options = append(r.Options, "-o", s[0]+"="+s[1])
		fmt.Fprintf(&conf, "%s %q;\n", s[0], s[1])
	}
	// Read instead of the machine's configuration files.
	fmt.Fprintf(&conf, "Dir::Etc::Parts %q;\nDir::Etc::Main \"/dev/null\";\n", filepath.Join(dir, "parts"))
	r.Config = filepath.Join(dir, "apt.conf")
	require.NoError(t, os.WriteFile(r.Config, []byte(conf.String()), 0o644))
	real, err := exec.LookPath("apt-get")
	require.NoError(t, err)
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %q\nexec %q \"$@\"\n", r.log, real)
	require.NoError(t, os.WriteFile(r.AptGet, []byte(script), 0o755))
	return r
}

// Add builds package name at version (a file /usr/share/NAME/version
// holding the version), reindexes the repository and updates apt's
// lists of it.
func (r *AptRepo) Add(t testing.TB, name, version string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "pkg")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/share", name), 0o755))
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: Cairn tests <tests@cairn.invalid>\nDescription: package of a Cairn test\n", name, version)
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/share", name, "version"), []byte(version+"\n"), 0o644))
	aptRun(t, "", "dpkg-deb", "--root-owner-group", "--build", root, filepath.Join(r.Dir, "pool", name+"_"+version+"_all.deb"))
	out := aptRun(t, filepath.Join(r.Dir, "pool"), "dpkg-scanpackages", "--multiversion", ".", "/dev/null")
	require.NoError(t, os.WriteFile(filepath.Join(r.Dir, "pool", "Packages"), []byte(out), 0o644))
	aptRun(t, "", "apt-get", append(r.Options, "-q", "update")...)
}

// Installs counts the apt-get install runs made through AptGet so far.
func (r *AptRepo) Installs(t testing.TB) int {
	t.Helper()
	data, err := os.ReadFile(r.log)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), " install ")
}

// PackageName is a package name unique to this run, so that the
// machine's own packages are never touched; the package is purged when
// the test ends.
func PackageName(t testing.TB, tag string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "cairn-test-" + hex.EncodeToString(b[:]) + "-" + tag
	t.Cleanup(func() { purge(t, name) })
	return name
}

// purge removes name from the dpkg database, waiting (up to two
// minutes) while another dpkg or apt holds its lock.
func purge(t testing.TB, name string) {
	var out []byte
	for range 120 {
		var err error
		if out, err = exec.Command("dpkg", "--purge", name).CombinedOutput(); err == nil {
			return
		}
		if !strings.Contains(string(out), "lock") {
			break
		}
		time.Sleep(time.Second)
	}
	if Installed(t, name) != "" {
		t.Errorf("purge test package %s: %s", name, out)
	}
}

// Installed is dpkg's installed version of name, "" when it is not
// installed.
func Installed(t testing.TB, name string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${db:Status-Status} ${Version}", name).Output()
	if err != nil {
		return ""
	}
	st, v, _ := strings.Cut(string(out), " ")
	if st != "installed" {
		return ""
	}
	return v
}

func aptRun(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s %v: %s", name, args, stderr.String())
	return string(out)
}
