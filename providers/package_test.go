package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

func packageRegistry(t *testing.T, repo *testenv.AptRepo) *Registry {
	r := localRegistry(t)
	r.Register(NewPackage(PackageOptions{AptGet: repo.AptGet, AptOptions: repo.Options}))
	return r
}

// TestPackageLifecycle installs packages of a local apt repository into
// the machine's dpkg database: apply in one transaction, re-apply, upgrade
// to latest, pin a version, remove, roll each back, export.
func TestPackageLifecycle(t *testing.T) {
	ctx := context.Background()
	repo := testenv.NewAptRepo(t)
	a, b := testenv.PackageName(t, "a"), testenv.PackageName(t, "b")
	repo.Add(t, a, "1.0-1")
	repo.Add(t, b, "1.0-1")
	r := packageRegistry(t, repo)
	node := Node{Name: "node-1"}
	req := func(name, ensure string) Request {
		return Request{Kind: "package", Name: name, Node: node, Spec: model.Spec{"name": name, "ensure": ensure}}
	}

	// Noop: planned, nothing installed.
	plan, err := r.Converge(ctx, Request{Kind: "package", Name: a, Node: node, Spec: model.Spec{"name": a}, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionCreate, plan.Action)
	assert.Contains(t, plan.Changes, model.AttrChange{Path: "undo", New: "purges " + a + "; packages apt installs with it stay"})
	assert.Empty(t, testenv.Installed(t, a))

	// Apply: both packages in one apt-get transaction, then each step
	// finds its package installed and reports the creation.
	reqA, reqB := req(a, "present"), req(b, "installed")
	require.NoError(t, r.ApplyBatches(ctx, []Request{reqA, reqB}))
	assert.Equal(t, 1, repo.Installs(t), "one transaction")
	chA, err := r.Converge(ctx, withHave(t, r, ctx, reqA, plan.Before))
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeCreated, chA.Outcome)
	chB, err := r.Converge(ctx, withHave(t, r, ctx, reqB, State{ID: b}))
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeCreated, chB.Outcome)
	assert.Equal(t, 1, repo.Installs(t), "the steps' applies ran no apt-get of their own")
	assert.Equal(t, "1.0-1", testenv.Installed(t, a))
	assert.Equal(t, "1.0-1", testenv.Installed(t, b))
	data, err := os.ReadFile(filepath.Join("/usr/share", a, "version"))
	require.NoError(t, err)
	assert.Equal(t, "1.0-1\n", string(data))

	// Re-apply: nothing to do.
	again, err := r.Converge(ctx, reqA)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action)

	// latest: a newer version in the repository is an update.
	repo.Add(t, a, "2.0-1")
	latest := req(a, "latest")
	plan, err = r.Converge(ctx, Request{Kind: "package", Name: a, Node: node, Spec: latest.Spec, Noop: true})
	require.NoError(t, err)
	require.Equal(t, model.ActionUpdate, plan.Action)
	// The plan says what a rollback cannot promise.
	assert.Equal(t, []model.AttrChange{
		{Path: "version", Old: "1.0-1", New: "latest"},
		{Path: "undo", New: "installs " + a + " 1.0-1 again, only while the sources still offer it"},
	}, plan.Changes)
	assert.NotContains(t, plan.Report, "undo")
	up, err := r.Converge(ctx, latest)
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeUpdated, up.Outcome)
	assert.Equal(t, "2.0-1", testenv.Installed(t, a))
	again, err = r.Converge(ctx, latest)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action, again.Report)

	// Undo of the upgrade: the old version again, from the repository.
	require.NoError(t, r.Compensate(ctx, latest, up))
	assert.Equal(t, "1.0-1", testenv.Installed(t, a))

	// A pinned version, and its undo.
	pin, err := r.Converge(ctx, req(a, "2.0-1"))
	require.NoError(t, err)
	assert.Equal(t, "2.0-1", testenv.Installed(t, a))
	require.NoError(t, r.Compensate(ctx, req(a, "2.0-1"), pin))
	assert.Equal(t, "1.0-1", testenv.Installed(t, a))

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
	assert.Contains(t, all, Listed{Name: "dpkg", Spec: model.Spec{"name": "dpkg", "ensure": testenv.Installed(t, "dpkg")}})
	_, err = r.List(ctx, "package", node, ListQuery{Names: []string{"--admindir=/tmp"}})
	require.Error(t, err, "an option given as a name")
	assert.True(t, IsConfigError(err))
	// The exported spec applied again is a no-op.
	exp, err := r.Converge(ctx, Request{Kind: "package", Name: a, Node: node, Spec: model.Spec{"name": a, "ensure": "1.0-1"}})
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, exp.Action)

	// absent removes; undo installs the version it took away.
	rm, err := r.Converge(ctx, req(b, "absent"))
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeDeleted, rm.Outcome)
	assert.Empty(t, testenv.Installed(t, b))
	require.NoError(t, r.Compensate(ctx, req(b, "absent"), rm))
	assert.Equal(t, "1.0-1", testenv.Installed(t, b))

	// Undo of the first apply: the packages it installed are purged.
	require.NoError(t, r.Compensate(ctx, reqA, chA))
	require.NoError(t, r.Compensate(ctx, reqB, chB))
	assert.Empty(t, testenv.Installed(t, a))
	assert.Empty(t, testenv.Installed(t, b))
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
	repo := testenv.NewAptRepo(t)
	known := testenv.PackageName(t, "k")
	repo.Add(t, known, "1.0-1")
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
			assert.Empty(t, testenv.Installed(t, known))
		})
	}
}
