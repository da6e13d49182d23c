package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// RpmPool is a directory of small noarch rpms a test builds once (each
// holds one file, /usr/share/NAME/VERSION-RELEASE, so that two versions
// of an install-only package can be installed side by side) to publish
// into the repositories of its RpmRepos.
type RpmPool struct{ Dir string }

// NeedDnf skips (fails under CAIRN_REQUIRE_ALL) when rpms cannot be built
// and installed with dnf here.
func NeedDnf(t testing.TB) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"rpm", "rpmbuild", "dnf", "createrepo_c"} {
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
		t.Fatalf("dnf package tests need %v (CAIRN_REQUIRE_ALL is set)", missing)
	}
	t.Skipf("dnf package tests need %v", missing)
}

// BuildRpms builds, with rpmbuild from a spec it writes, each package of
// pkgs at each of its versions ([epoch:]version-release) into a pool in
// a directory of t. Builds read nothing of the machine's rpm database
// (--nodeps).
func BuildRpms(t testing.TB, pkgs map[string][]string) *RpmPool {
	t.Helper()
	NeedDnf(t)
	dir := t.TempDir()
	pool := &RpmPool{Dir: filepath.Join(dir, "pool")}
	spec := filepath.Join(dir, "test.spec")
	require.NoError(t, os.WriteFile(spec, []byte(rpmSpec), 0o644))
	for name, versions := range pkgs {
		for _, v := range versions {
			e := splitEVR(t, v)
			args := []string{"-bb", "--nodeps", "--quiet",
				"--define", "_topdir " + filepath.Join(dir, "top"),
				"--define", "_rpmdir " + pool.Dir,
				"--define", "_build_id_links none",
				"--define", "pkgname " + name,
				"--define", "pkgversion " + e[1],
				"--define", "pkgrelease " + e[2],
				"--define", "pkgepoch " + cmpDefault(e[0], "0"),
				spec}
			rpmRun(t, "rpmbuild", args...)
		}
	}
	return pool
}

// rpmSpec is the spec of every test package, its fields given as macros.
const rpmSpec = `Name: %{pkgname}
Version: %{pkgversion}
Release: %{pkgrelease}
Epoch: %{pkgepoch}
Summary: package of a Cairn test
License: MIT
BuildArch: noarch
%description
A package of a Cairn test.
%install
mkdir -p %{buildroot}/usr/share/%{name}
echo %{version}-%{release} > %{buildroot}/usr/share/%{name}/%{version}-%{release}
%files
/usr/share/%{name}/%{version}-%{release}
`

// rpmEVR is [epoch:]version-release.
var rpmEVR = regexp.MustCompile(`^(?:([0-9]+):)?([^-:]+)-([^-:]+)$`)

func splitEVR(t testing.TB, v string) [3]string {
	m := rpmEVR.FindStringSubmatch(v)
	require.NotNil(t, m, "want [epoch:]version-release, got %q", v)
	return [3]string{m[1], m[2], m[3]}
}

func cmpDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// RpmRepo is a dnf repository of a test (a file:// directory of rpms of
// a pool, indexed by createrepo_c) and an install root with its own rpm
// database that dnf installs into (cairn-test-k is install-only there,
// as kernels are: its versions are installed side by side): dnf reads only
// the repository's
// configuration (Options), and keeps its cache, history and logs inside
// Root, so the machine's own package databases are never read or
// written.
type RpmRepo struct {
	// Root is the install root (dnf --installroot, rpm --root).
	Root string
	// Options are dnf's options for the repository and nothing else.
	Options []string
	dir     string
	pool    *RpmPool
}

// NewRpmRepo makes an empty repository and an empty install root.
func NewRpmRepo(t testing.TB, pool *RpmPool) *RpmRepo {
	t.Helper()
	base := t.TempDir()
	r := &RpmRepo{Root: filepath.Join(base, "root"), dir: filepath.Join(base, "repo"), pool: pool}
	require.NoError(t, os.MkdirAll(r.Root, 0o755))
	require.NoError(t, os.MkdirAll(r.dir, 0o755))
	rpmRun(t, "rpm", "--root", r.Root, "--initdb")
	conf := filepath.Join(base, "dnf.conf")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(`[main]
reposdir=
gpgcheck=0
install_weak_deps=0
installonlypkgs=cairn-test-k
[cairn-test]
name=Cairn test packages
baseurl=file://%s
gpgcheck=0
`, r.dir)), 0o644))
	r.Options = []string{"--config=" + conf, "--setopt=reposdir=", "--releasever=1", "--noplugins"}
	r.index(t)
	return r
}

// Publish puts name at version (as built into the pool) into the
// repository, reindexes it and refreshes dnf's cache of it.
func (r *RpmRepo) Publish(t testing.TB, name, version string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.pool.Dir, "noarch", r.file(t, name, version)))
	require.NoError(t, err, "%s %s is not in the pool", name, version)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, r.file(t, name, version)), data, 0o644))
	r.index(t)
}

// Withdraw takes name at version out of the repository, reindexes it and
// refreshes dnf's cache of it.
func (r *RpmRepo) Withdraw(t testing.TB, name, version string) {
	t.Helper()
	require.NoError(t, os.Remove(filepath.Join(r.dir, r.file(t, name, version))))
	r.index(t)
}

func (r *RpmRepo) file(t testing.TB, name, version string) string {
	e := splitEVR(t, version)
	return name + "-" + e[1] + "-" + e[2] + ".noarch.rpm"
}

func (r *RpmRepo) index(t testing.TB) {
	t.Helper()
	rpmRun(t, "createrepo_c", "--quiet", r.dir)
	rpmRun(t, "dnf", r.dnfArgs("-q", "makecache", "--refresh")...)
}

func (r *RpmRepo) dnfArgs(args ...string) []string {
	return append(append([]string{"--installroot=" + r.Root}, r.Options...), args...)
}

// DropCache deletes dnf's cache of the repository in the root (dnf clean
// all), as on a host that never fetched its repositories' metadata.
func (r *RpmRepo) DropCache(t testing.TB) {
	t.Helper()
	rpmRun(t, "dnf", r.dnfArgs("-q", "clean", "all")...)
}

// Installed is the root's installed version of name ([epoch:]version-
// release, epoch only when not 0), "" when it is not installed.
func (r *RpmRepo) Installed(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("rpm", "--root", r.Root, "-q", "--qf", "%{EPOCHNUM}:%{VERSION}-%{RELEASE}", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(string(out), "0:")
}

// Transactions are dnf's history in the root, oldest first: how many
// packages each transaction altered.
func (r *RpmRepo) Transactions(t testing.TB) []int {
	t.Helper()
	var out []int
	for _, l := range strings.Split(rpmRun(t, "dnf", r.dnfArgs("-q", "history", "list")...), "\n") {
		f := strings.Split(l, "|")
		if len(f) < 5 {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSpace(f[0])); err != nil {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f[len(f)-1]))
		require.NoError(t, err, "dnf history line %q", l)
		out = append([]int{n}, out...)
	}
	return out
}

func rpmRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s %v: %s", name, args, stderr.String())
	return string(out)
}
