package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// dnfSuite drives the package kind with dnf against install roots of its
// own, from a repository of rpms built once for the suite.
type dnfSuite struct {
	suite.Suite
	pool *testenv.RpmPool
}

func TestPackageDnf(t *testing.T) {
	suite.Run(t, new(dnfSuite))
}

func (s *dnfSuite) SetupSuite() {
	s.pool = testenv.BuildRpms(s.T(), map[string][]string{
		"cairn-test-a": {"1.0-1", "2.0-1", "3.0-1"},
		"cairn-test-b": {"1.0-1"},
		"cairn-test-e": {"1:1.0-1"},
		"cairn-test-k": {"1.0-1", "2.0-1"},
	})
}

// setup is a fresh root and repository publishing the given name and
// version pairs, and a registry whose package kind drives dnf there.
func (s *dnfSuite) setup(published ...string) (*testenv.RpmRepo, *Registry) {
	t := s.T()
	repo := testenv.NewRpmRepo(t, s.pool)
	for i := 0; i+1 < len(published); i += 2 {
		repo.Publish(t, published[i], published[i+1])
	}
	r := localRegistry(t)
	r.Register(NewPackage(PackageOptions{Manager: PackageManagerDnf, Root: repo.Root, DnfOptions: repo.Options}))
	return repo, r
}

func pkgReq(name, ensure string) Request {
	return Request{Kind: "package", Name: name, Node: Node{Name: "node-1"}, Spec: model.Spec{"name": name, "ensure": ensure}}
}

// TestLifecycle: a plan that reads only, two packages in one dnf
// transaction, latest, an upgrade and a downgrade to a version, a
// removal, the undo of each, and export.
func (s *dnfSuite) TestLifecycle() {
	t, ctx := s.T(), context.Background()
	const a, b = "cairn-test-a", "cairn-test-b"
	repo, r := s.setup(a, "1.0-1", b, "1.0-1")

	// Noop: planned, nothing installed, no transaction.
	reqA, reqB := pkgReq(a, "present"), pkgReq(b, "installed")
	plan, err := r.Converge(ctx, Request{Kind: "package", Name: a, Node: reqA.Node, Spec: reqA.Spec, Noop: true})
	s.Require().NoError(err)
	s.Equal(model.ActionCreate, plan.Action)
	s.Contains(plan.Changes, model.AttrChange{Path: "undo", New: "removes " + a + " with dnf remove"})
	s.Empty(repo.Installed(t, a))
	s.Empty(repo.Transactions(t))

	// Apply: both packages in one dnf transaction; each step then finds
	// its package installed and reports the creation.
	s.Require().NoError(r.ApplyBatches(ctx, []Request{reqA, reqB}))
	s.Equal([]int{2}, repo.Transactions(t), "one transaction of two packages")
	chA, err := r.Converge(ctx, withHave(t, r, ctx, reqA, plan.Before))
	s.Require().NoError(err)
	s.Equal(model.OutcomeCreated, chA.Outcome)
	chB, err := r.Converge(ctx, withHave(t, r, ctx, reqB, State{ID: b}))
	s.Require().NoError(err)
	s.Equal(model.OutcomeCreated, chB.Outcome)
	s.Equal([]int{2}, repo.Transactions(t), "the steps' applies ran no dnf of their own")
	s.Equal("1.0-1", repo.Installed(t, a))
	s.Equal("1.0-1", repo.Installed(t, b))
	data, err := os.ReadFile(filepath.Join(repo.Root, "usr/share", a, "1.0-1"))
	s.Require().NoError(err)
	s.Equal("1.0-1\n", string(data))

	// Re-apply: nothing to do.
	again, err := r.Converge(ctx, reqA)
	s.Require().NoError(err)
	s.Equal(model.ActionNoop, again.Action)

	// latest: a newer version in the repository is an update, planned
	// from the metadata cache alone.
	repo.Publish(t, a, "2.0-1")
	latest := pkgReq(a, "latest")
	plan, err = r.Converge(ctx, Request{Kind: "package", Name: a, Node: latest.Node, Spec: latest.Spec, Noop: true})
	s.Require().NoError(err)
	s.Require().Equal(model.ActionUpdate, plan.Action)
	s.Equal([]model.AttrChange{
		{Path: "version", Old: "1.0-1", New: "latest"},
		{Path: "undo", New: "installs " + a + " 1.0-1 again, only while the sources still offer it"},
	}, plan.Changes)
	s.Equal("1.0-1", repo.Installed(t, a), "a plan changes nothing")
	up, err := r.Converge(ctx, latest)
	s.Require().NoError(err)
	s.Equal(model.OutcomeUpdated, up.Outcome)
	s.Equal("2.0-1", repo.Installed(t, a))
	again, err = r.Converge(ctx, latest)
	s.Require().NoError(err)
	s.Equal(model.ActionNoop, again.Action, again.Report)

	// Undo of the upgrade: the old version again, from the repository.
	s.Require().NoError(r.Compensate(ctx, latest, up))
	s.Equal("1.0-1", repo.Installed(t, a))

	// A version: an upgrade to it, and its undo.
	repo.Publish(t, a, "3.0-1")
	pin, err := r.Converge(ctx, pkgReq(a, "3.0-1"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeUpdated, pin.Outcome)
	s.Equal("3.0-1", repo.Installed(t, a))
	s.Require().NoError(r.Compensate(ctx, pkgReq(a, "3.0-1"), pin))
	s.Equal("1.0-1", repo.Installed(t, a))

	// A downgrade to a version (given without its release), and its undo.
	_, err = r.Converge(ctx, pkgReq(a, "3.0-1"))
	s.Require().NoError(err)
	down, err := r.Converge(ctx, pkgReq(a, "2.0"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeUpdated, down.Outcome)
	s.Equal([]model.AttrChange{
		{Path: "version", Old: "3.0-1", New: "2.0"},
		{Path: "undo", New: "installs " + a + " 3.0-1 again, only while the sources still offer it"},
	}, down.Changes)
	s.Equal("2.0-1", repo.Installed(t, a))
	again, err = r.Converge(ctx, pkgReq(a, "2.0"))
	s.Require().NoError(err)
	s.Equal(model.ActionNoop, again.Action, "2.0 matches 2.0-1")
	s.Require().NoError(r.Compensate(ctx, pkgReq(a, "2.0"), down))
	s.Equal("3.0-1", repo.Installed(t, a))
	_, err = r.Converge(ctx, pkgReq(a, "1.0-1"))
	s.Require().NoError(err)

	// Export: the rpm database's packages, by name, with their versions;
	// applied again, a no-op.
	listed, err := r.List(ctx, "package", reqA.Node, ListQuery{Names: []string{a, b, "cairn-no-such-package"}})
	s.Require().NoError(err)
	s.ElementsMatch([]Listed{
		{Name: a, Spec: model.Spec{"name": a, "ensure": "1.0-1"}},
		{Name: b, Spec: model.Spec{"name": b, "ensure": "1.0-1"}},
	}, listed)
	all, err := r.List(ctx, "package", reqA.Node, ListQuery{})
	s.Require().NoError(err)
	s.ElementsMatch(listed, all, "the root holds only these")
	_, err = r.List(ctx, "package", reqA.Node, ListQuery{Names: []string{"--root=/"}})
	s.Require().Error(err, "an option given as a name")
	s.True(IsConfigError(err))
	exp, err := r.Converge(ctx, Request{Kind: "package", Name: a, Node: reqA.Node, Spec: listed[0].Spec})
	s.Require().NoError(err)
	s.Equal(model.ActionNoop, exp.Action)

	// absent removes; undo installs the version it took away.
	rm, err := r.Converge(ctx, pkgReq(b, "absent"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeDeleted, rm.Outcome)
	s.Empty(repo.Installed(t, b))
	s.Require().NoError(r.Compensate(ctx, pkgReq(b, "absent"), rm))
	s.Equal("1.0-1", repo.Installed(t, b))

	// Undo of the first apply: the packages it installed are removed.
	s.Require().NoError(r.Compensate(ctx, reqA, chA))
	s.Require().NoError(r.Compensate(ctx, reqB, chB))
	s.Empty(repo.Installed(t, a))
	s.Empty(repo.Installed(t, b))
	_, err = os.Stat(filepath.Join(repo.Root, "usr/share", a, "1.0-1"))
	s.True(os.IsNotExist(err), "files of the removed package are gone")
}

// TestEpoch: a version with an epoch is shown with it, and a wanted
// version matches it without; a wrong epoch is a change dnf cannot make.
func (s *dnfSuite) TestEpoch() {
	t, ctx := s.T(), context.Background()
	const e = "cairn-test-e"
	repo, r := s.setup(e, "1:1.0-1")
	ch, err := r.Converge(ctx, pkgReq(e, "latest"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeCreated, ch.Outcome)
	s.Equal("1:1.0-1", repo.Installed(t, e))
	s.Equal("1:1.0-1", ch.After.Outputs["version"])
	for _, v := range []string{"1.0", "1.0-1", "1:1.0-1", "latest", "present"} {
		again, err := r.Converge(ctx, pkgReq(e, v))
		s.Require().NoError(err)
		s.Equal(model.ActionNoop, again.Action, "ensure %s", v)
	}
	_, err = r.Converge(ctx, pkgReq(e, "0:1.0-1"))
	s.Require().Error(err)
	s.Contains(err.Error(), "package cairn-test-e: the dnf repositories offer no version 0:1.0-1")
	s.Equal("1:1.0-1", repo.Installed(t, e))
}

// TestArch: a name with dnf's .arch takes a version and latest.
func (s *dnfSuite) TestArch() {
	t, ctx := s.T(), context.Background()
	const a = "cairn-test-a"
	repo, r := s.setup(a, "1.0-1", a, "2.0-1")
	ch, err := r.Converge(ctx, pkgReq(a+".noarch", "1.0-1"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeCreated, ch.Outcome)
	s.Equal("1.0-1", repo.Installed(t, a))
	ch, err = r.Converge(ctx, pkgReq(a+".noarch", "latest"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeUpdated, ch.Outcome)
	s.Equal("2.0-1", repo.Installed(t, a))
	again, err := r.Converge(ctx, pkgReq(a+".noarch", "2.0"))
	s.Require().NoError(err)
	s.Equal(model.ActionNoop, again.Action)
}

// TestNoCache: a plan for latest reads only dnf's metadata cache, and
// fails without one; a transaction fetches the metadata of a repository
// dnf has none of.
func (s *dnfSuite) TestNoCache() {
	t, ctx := s.T(), context.Background()
	const a, b = "cairn-test-a", "cairn-test-b"
	repo, r := s.setup(a, "1.0-1", b, "1.0-1")
	_, err := r.Converge(ctx, pkgReq(b, "present"))
	s.Require().NoError(err)
	repo.DropCache(t)
	latest := pkgReq(b, "latest")
	latest.Noop = true
	_, err = r.Converge(ctx, latest)
	s.Require().Error(err)
	s.Contains(err.Error(), "Cache-only enabled but no cache")
	ch, err := r.Converge(ctx, pkgReq(a, "present"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeCreated, ch.Outcome)
	s.Equal("1.0-1", repo.Installed(t, a))
	plan, err := r.Converge(ctx, latest)
	s.Require().NoError(err, "the transaction fetched the metadata")
	s.Equal(model.ActionNoop, plan.Action)
}

// TestInstallOnly: of an install-only package's instances (kernels), the
// one installed last is read and exported; undoing its upgrade cannot
// make the old one the installed one again, and says so.
func (s *dnfSuite) TestInstallOnly() {
	ctx := context.Background()
	const k = "cairn-test-k"
	_, r := s.setup(k, "1.0-1", k, "2.0-1")
	_, err := r.Converge(ctx, pkgReq(k, "1.0-1"))
	s.Require().NoError(err)
	up, err := r.Converge(ctx, pkgReq(k, "2.0-1"))
	s.Require().NoError(err)
	s.Equal(model.OutcomeUpdated, up.Outcome)
	node := Node{Name: "node-1"}
	listed, err := r.List(ctx, "package", node, ListQuery{Names: []string{k}})
	s.Require().NoError(err)
	s.Equal([]Listed{{Name: k, Spec: model.Spec{"name": k, "ensure": "2.0-1"}}}, listed)
	all, err := r.List(ctx, "package", node, ListQuery{})
	s.Require().NoError(err)
	s.Equal(listed, all, "one entry for both instances")
	err = r.Compensate(ctx, pkgReq(k, "2.0-1"), up)
	s.Require().Error(err)
	s.True(errors.Is(err, ErrIrreversible), "%v", err)
	s.Contains(err.Error(), "dnf left cairn-test-k at 2.0-1")
}

// TestIrreversible: the undo of an upgrade whose old version the
// repository no longer offers fails as irreversible, and says why.
func (s *dnfSuite) TestIrreversible() {
	t, ctx := s.T(), context.Background()
	const a = "cairn-test-a"
	repo, r := s.setup(a, "1.0-1", a, "2.0-1")
	_, err := r.Converge(ctx, pkgReq(a, "1.0-1"))
	s.Require().NoError(err)
	up, err := r.Converge(ctx, pkgReq(a, "2.0-1"))
	s.Require().NoError(err)
	repo.Withdraw(t, a, "1.0-1")
	err = r.Compensate(ctx, pkgReq(a, "2.0-1"), up)
	s.Require().Error(err)
	s.True(errors.Is(err, ErrIrreversible), "%v", err)
	s.Contains(err.Error(), "the dnf repositories offer no version 1.0-1")
	s.Equal("2.0-1", repo.Installed(t, a))
}

// TestBadInput: names and versions dnf's format refuses are
// configuration errors; what the repository does not offer is named.
func (s *dnfSuite) TestBadInput() {
	t, ctx := s.T(), context.Background()
	const known = "cairn-test-b"
	repo, r := s.setup(known, "1.0-1")
	tests := []struct {
		name   string
		spec   model.Spec
		config bool
		msg    string
	}{
		{"bad name", model.Spec{"name": "Bad Name"}, true, "want an RPM package name"},
		{"option as name", model.Spec{"name": "--installroot=/"}, true, "want an RPM package name"},
		{"glob as name", model.Spec{"name": "cairn-*"}, true, "want an RPM package name"},
		{"bad ensure", model.Spec{"name": known, "ensure": "newest please"}, true, "want present, installed, absent, latest or an RPM version"},
		{"two releases", model.Spec{"name": known, "ensure": "1.0-1-2"}, true, "an RPM version ([epoch:]version[-release])"},
		{"unknown attribute", model.Spec{"name": known, "version": "1.0-1"}, true, "a version is given as ensure"},
		{"not in the repositories", model.Spec{"name": "cairn-test-none-such"}, false, "package cairn-test-none-such: not in the dnf repositories"},
		{"version not in the repositories", model.Spec{"name": known, "ensure": "9.9-9"}, false, "package cairn-test-b: the dnf repositories offer no version 9.9-9"},
		{"latest of nothing", model.Spec{"name": "cairn-test-none-such", "ensure": "latest"}, false, "package cairn-test-none-such: not in the dnf repositories"},
	}
	for _, tt := range tests {
		s.Run(tt.name, func() {
			_, err := r.Converge(ctx, Request{Kind: "package", Name: "p", Node: Node{Name: "n"}, Spec: tt.spec})
			require.Error(s.T(), err)
			s.Contains(err.Error(), tt.msg)
			s.Equal(tt.config, IsConfigError(err), "config error: %v", err)
			s.Empty(repo.Installed(t, known))
		})
	}
	s.Empty(repo.Transactions(t), "no transaction went through")
}

// TestRPMVersionMatch: the versions equal, the releases and epochs where
// the wanted version gives them, each compared as written.
func TestRPMVersionMatch(t *testing.T) {
	tests := []struct {
		want, installed string
		match           bool
	}{
		{"2.4.62", "2.4.62-1.fc40", true},
		{"2.4.62", "1:2.4.62-3.fc40", true},
		{"2.4.62-1.fc40", "2.4.62-1.fc40", true},
		{"2.4.62-1.fc40", "2.4.62-3.fc40", false},
		{"0:2.4.62-1", "2.4.62-1", true},
		{"0:2.4.62-1", "1:2.4.62-1", false},
		{"1:2.4.62", "1:2.4.62-1", true},
		{"01:2.4.62", "1:2.4.62-1", true},
		{"2.4.6", "2.4.62-1", false},
		{"2.4.62", "2.4.620-1", false},
		{"2.4.062", "2.4.62-1", false},
	}
	m := newDnfManager(PackageOptions{})
	for _, tt := range tests {
		require.Equal(t, tt.match, m.matches(tt.want, tt.installed), "%s against installed %s", tt.want, tt.installed)
	}
}

func TestDnfSpec(t *testing.T) {
	tests := []struct{ name, version, want string }{
		{"nginx", "", "nginx"},
		{"nginx", "1:1.24.0-1.fc40", "nginx-1:1.24.0-1.fc40"},
		{"glibc.i686", "2.39-1", "glibc-2.39-1.i686"},
		{"python3.11", "3.11.9-1", "python3.11-3.11.9-1"},
		{"python3.11.x86_64", "3.11.9-1", "python3.11-3.11.9-1.x86_64"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, dnfSpec(tt.name, tt.version))
	}
}
