package providers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// aptRepo is a local apt repository built by a test from .deb files it
// makes, and the apt options that make apt see it and nothing else: the
// machine's own sources, lists and caches are never read or written.
type aptRepo struct {
	dir  string
	opts []string
	// log records every apt-get run (the wrapper in AptGet).
	log    string
	aptGet string
}

// needAptTools skips (fails under CAIRN_REQUIRE_ALL) when the test cannot
// install packages into the machine's dpkg database.
func needAptTools(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-query", "dpkg-deb", "dpkg-scanpackages"} {
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

func newAptRepo(t *testing.T) *aptRepo {
	t.Helper()
	needAptTools(t)
	dir := t.TempDir()
	for _, d := range []string{"pool", "parts", "lists/partial", "cache/archives/partial", "state"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	list := filepath.Join(dir, "sources.list")
	require.NoError(t, os.WriteFile(list, []byte("deb [trusted=yes] file:"+filepath.Join(dir, "pool")+" ./\n"), 0o644))
	r := &aptRepo{dir: dir, log: filepath.Join(dir, "apt-get.log"), aptGet: filepath.Join(dir, "apt-get")}
	r.opts = []string{
		"-o", "Dir::Etc::SourceList=" + list,
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(dir, "parts"),
		"-o", "Dir::State::Lists=" + filepath.Join(dir, "lists"),
		"-o", "Dir::State::extended_states=" + filepath.Join(dir, "state", "extended_states"),
		"-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
		"-o", "Acquire::Languages=none",
	}
	real, err := exec.LookPath("apt-get")
	require.NoError(t, err)
	// The real apt-get, with every run's arguments logged: how many
	// transactions an apply made is counted, not assumed.
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %q\nexec %q \"$@\"\n", r.log, real)
	require.NoError(t, os.WriteFile(r.aptGet, []byte(script), 0o755))
	return r
}

// add builds name at version into the pool, reindexes it and updates
// apt's lists (from the file: source only).
func (r *aptRepo) add(t *testing.T, name, version string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "pkg")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/share", name), 0o755))
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: Cairn tests <tests@cairn.invalid>\nDescription: package of a Cairn test\n", name, version)
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/share", name, "version"), []byte(version+"\n"), 0o644))
	run(t, "", "dpkg-deb", "--root-owner-group", "--build", root, filepath.Join(r.dir, "pool", name+"_"+version+"_all.deb"))
	out := run(t, filepath.Join(r.dir, "pool"), "dpkg-scanpackages", "--multiversion", ".", "/dev/null")
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "pool", "Packages"), []byte(out), 0o644))
	run(t, "", "apt-get", append(r.opts, "-q", "update")...)
}

// installs counts the apt-get install runs so far.
func (r *aptRepo) installs(t *testing.T) int {
	data, err := os.ReadFile(r.log)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), " install ")
}

func run(t *testing.T, dir, name string, args ...string) string {
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

// testPackageName is unique to this run, so that the machine's packages
// are never touched; it is purged when the test ends.
func testPackageName(t *testing.T, tag string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "cairn-test-" + hex.EncodeToString(b[:]) + "-" + tag
	t.Cleanup(func() {
		_ = exec.Command("dpkg", "--purge", name).Run()
	})
	return name
}

// installed is dpkg's version of name, "" when it is not installed.
func installed(t *testing.T, name string) string {
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

func packageRegistry(t *testing.T, repo *aptRepo) *Registry {
	r := localRegistry(t)
	r.Register(NewPackage(PackageOptions{AptGet: repo.aptGet, AptOptions: repo.opts}))
	return r
}

// TestPackageLifecycle installs packages of a local apt repository into
// the machine's dpkg database: apply in one transaction, re-apply, upgrade
// to latest, pin a version, remove, roll each back, export.
func TestPackageLifecycle(t *testing.T) {
	ctx := context.Background()
	repo := newAptRepo(t)
	a, b := testPackageName(t, "a"), testPackageName(t, "b")
	repo.add(t, a, "1.0-1")
	repo.add(t, b, "1.0-1")
	r := packageRegistry(t, repo)
	node := Node{Name: "node-1"}
	req := func(name, ensure string) Request {
		return Request{Kind: "package", Name: name, Node: node, Spec: model.Spec{"name": name, "ensure": ensure}}
	}

	// Noop: planned, nothing installed.
	plan, err := r.Converge(ctx, Request{Kind: "package", Name: a, Node: node, Spec: model.Spec{"name": a}, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionCreate, plan.Action)
	assert.Empty(t, installed(t, a))

	// Apply: both packages in one apt-get transaction, then each step
	// finds its package installed and reports the creation.
	reqA, reqB := req(a, "present"), req(b, "installed")
	require.NoError(t, r.ApplyBatches(ctx, []Request{reqA, reqB}))
	assert.Equal(t, 1, repo.installs(t), "one transaction")
	chA, err := r.Converge(ctx, withHave(t, r, ctx, reqA, plan.Before))
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeCreated, chA.Outcome)
	chB, err := r.Converge(ctx, withHave(t, r, ctx, reqB, State{ID: b}))
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeCreated, chB.Outcome)
	assert.Equal(t, 1, repo.installs(t), "the steps' applies ran no apt-get of their own")
	assert.Equal(t, "1.0-1", installed(t, a))
	assert.Equal(t, "1.0-1", installed(t, b))
	data, err := os.ReadFile(filepath.Join("/usr/share", a, "version"))
	require.NoError(t, err)
	assert.Equal(t, "1.0-1\n", string(data))

	// Re-apply: nothing to do.
	again, err := r.Converge(ctx, reqA)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action)

	// latest: a newer version in the repository is an update.
	repo.add(t, a, "2.0-1")
	latest := req(a, "latest")
	plan, err = r.Converge(ctx, Request{Kind: "package", Name: a, Node: node, Spec: latest.Spec, Noop: true})
	require.NoError(t, err)
	require.Equal(t, model.ActionUpdate, plan.Action)
	assert.Equal(t, []model.AttrChange{{Path: "version", Old: "1.0-1", New: "latest"}}, plan.Changes)
	up, err := r.Converge(ctx, latest)
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeUpdated, up.Outcome)
	assert.Equal(t, "2.0-1", installed(t, a))
	again, err = r.Converge(ctx, latest)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action, again.Report)

	// Undo of the upgrade: the old version again, from the repository.
	require.NoError(t, r.Compensate(ctx, latest, up))
	assert.Equal(t, "1.0-1", installed(t, a))

	// A pinned version, and its undo.
	pin, err := r.Converge(ctx, req(a, "2.0-1"))
	require.NoError(t, err)
	assert.Equal(t, "2.0-1", installed(t, a))
	require.NoError(t, r.Compensate(ctx, req(a, "2.0-1"), pin))
	assert.Equal(t, "1.0-1", installed(t, a))

	// Export: dpkg's installed packages, by name, each with its version.
	listed, err := r.List(ctx, "package", node, ListQuery{Names: []string{a, b, "cairn-no-such-package"}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []Listed{
		{Name: a, Spec: model.Spec{"name": a, "ensure": "1.0-1"}},
		{Name: b, Spec: model.Spec{"name": b, "ensure": "1.0-1"}},
	}, listed)
	all, err := r.List(ctx, "package", node, ListQuery{})
	require.NoError(t, err)
	assert.Contains(t, all, Listed{Name: a, Spec: model.Spec{"name": a, "ensure": "1.0-1"}})
	assert.Contains(t, all, Listed{Name: "dpkg", Spec: model.Spec{"name": "dpkg", "ensure": installed(t, "dpkg")}})
	// The exported spec applied again is a no-op.
	exp, err := r.Converge(ctx, Request{Kind: "package", Name: a, Node: node, Spec: model.Spec{"name": a, "ensure": "1.0-1"}})
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, exp.Action)

	// absent removes; undo installs the version it took away.
	rm, err := r.Converge(ctx, req(b, "absent"))
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeDeleted, rm.Outcome)
	assert.Empty(t, installed(t, b))
	require.NoError(t, r.Compensate(ctx, req(b, "absent"), rm))
	assert.Equal(t, "1.0-1", installed(t, b))

	// Undo of the first apply: the packages it installed are purged.
	require.NoError(t, r.Compensate(ctx, reqA, chA))
	require.NoError(t, r.Compensate(ctx, reqB, chB))
	assert.Empty(t, installed(t, a))
	assert.Empty(t, installed(t, b))
	_, err = os.Stat(filepath.Join("/usr/share", a, "version"))
	assert.True(t, os.IsNotExist(err), "files of the purged package are gone")
}

// withHave is req as an apply sends it: with the state its plan read.
func withHave(t *testing.T, r *Registry, ctx context.Context, req Request, have State) Request {
	t.Helper()
	req.Have = &have
	return req
}

func TestPackageBadInput(t *testing.T) {
	ctx := context.Background()
	repo := newAptRepo(t)
	known := testPackageName(t, "k")
	repo.add(t, known, "1.0-1")
	r := packageRegistry(t, repo)
	tests := []struct {
		name   string
		spec   model.Spec
		config bool
		msg    string
	}{
		{"bad name", model.Spec{"name": "Bad Name"}, true, "want a Debian package name"},
		{"option as name", model.Spec{"name": "-o=x"}, true, "want a Debian package name"},
		{"bad ensure", model.Spec{"name": known, "ensure": "newest please"}, true, "want present, installed, absent, latest or a Debian version"},
		{"unknown attribute", model.Spec{"name": known, "version": "1.0-1"}, true, "a version is given as ensure"},
		{"not in the sources", model.Spec{"name": "cairn-test-none-such"}, false, "apt-get install"},
		{"version not in the sources", model.Spec{"name": known, "ensure": "9.9-9"}, false, "apt-get install"},
		{"latest of nothing", model.Spec{"name": "cairn-test-none-such", "ensure": "latest"}, false, "apt-get install"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Converge(ctx, Request{Kind: "package", Name: "p", Node: Node{Name: "n"}, Spec: tt.spec})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Equal(t, tt.config, IsConfigError(err), "config error: %v", err)
			assert.Empty(t, installed(t, known))
		})
	}
}
