package prepare_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

const twoFilesPackage = `apiVersion: cairn/v1
kind: File
metadata: {name: a}
spec: {path: /tmp/a, content: x}
---
apiVersion: cairn/v1
kind: File
metadata: {name: b}
spec: {path: /tmp/b, content: y}
`

// putPackageSnapshot stores docs as a package snapshot.
func putPackageSnapshot(t *testing.T, st store.Store, docs string) string {
	t.Helper()
	content, err := prepare.EncodePackageSnapshot(prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs})
	require.NoError(t, err)
	hash, err := st.PutSnapshot(context.Background(), prepare.PackageSnapshotKind, content)
	require.NoError(t, err)
	return hash
}

func planPackage(t *testing.T, st store.Store, run prepare.PackageRun) (*prepare.PackagePlan, error) {
	t.Helper()
	return prepare.Package(context.Background(), st, prepare.NewSnapshots(st, prepare.GraphsLoader{}), run, slog.New(slog.DiscardHandler))
}

// An apply plans the package's steps; recorded resources that left the
// package become deletes.
func TestPackagePlansStepsAndDeletes(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	stack := &model.Stack{Name: "s", URLs: []string{}}
	require.NoError(t, st.CreateStack(ctx, stack))
	old := putPackageSnapshot(t, st, twoFilesPackage)
	_, err := st.WriteStackRecord(ctx, stack.ID, "seed", []model.StackResource{
		{Kind: "File", PkgName: "a", ID: "/tmp/a"}, {Kind: "File", PkgName: "b", ID: "/tmp/b"},
	}, old, "", true)
	require.NoError(t, err)
	onlyA := putPackageSnapshot(t, st, twoFilesPackage[:len("apiVersion: cairn/v1\nkind: File\nmetadata: {name: a}\nspec: {path: /tmp/a, content: x}\n")])

	p, err := planPackage(t, st, prepare.PackageRun{Mode: contract.ModeApply, StackID: stack.ID, SnapshotHash: onlyA})
	require.NoError(t, err)
	assert.Equal(t, 2, p.Steps)
	assert.Equal(t, 1, p.Deletes, "b left the package")
	require.NotNil(t, p.Current)
	assert.Len(t, p.Current.Package.Resources, 1)
	assert.NotEmpty(t, p.Units)

	destroy, err := planPackage(t, st, prepare.PackageRun{Mode: contract.ModeDestroy, StackID: stack.ID})
	require.NoError(t, err)
	assert.Nil(t, destroy.Current, "a destroy loads no package")
	assert.Equal(t, 2, destroy.Deletes)
}

// What no retry fixes is a PackageError with the message the execution
// reports; a store failure is not.
func TestPackageErrors(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	graph, err := st.PutSnapshot(ctx, "graph", []byte("kind: Graph\nmetadata: {type: default}\ntasks: []\n"))
	require.NoError(t, err)
	tests := []struct {
		name string
		run  prepare.PackageRun
		want string
	}{
		{"no snapshot", prepare.PackageRun{Mode: contract.ModeApply}, "no package snapshot given"},
		{"unknown snapshot", prepare.PackageRun{Mode: contract.ModeApply, SnapshotHash: "feedfacefeedface"}, "package snapshot feedfacefeed not found"},
		{"graph snapshot", prepare.PackageRun{Mode: contract.ModeApply, SnapshotHash: graph}, "not a package"},
		{"unknown stack", prepare.PackageRun{Mode: contract.ModeApply, StackID: "nope"}, `stack "nope" not found`},
		{"unknown cluster", prepare.PackageRun{Mode: contract.ModeApply, ClusterID: "nope"}, `cluster "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := planPackage(t, st, tt.run)
			require.Error(t, err)
			assert.True(t, prepare.IsPackageError(err), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	require.NoError(t, st.Close())
	_, err = planPackage(t, st, prepare.PackageRun{Mode: contract.ModeApply, StackID: "s"})
	require.Error(t, err)
	assert.False(t, prepare.IsPackageError(err), "a store failure may be retried: %v", err)
}

// countingPackageLoader counts the packages it parses.
type countingPackageLoader struct{ loads *int }

func (l countingPackageLoader) Load(ctx context.Context, content []byte, parts prepare.SnapshotReader, nodes []model.Node) (*prepare.LoadedPackage, error) {
	*l.loads++
	return prepare.GraphsLoader{}.Load(ctx, content, parts, nodes)
}

// A snapshot loaded onto the same nodes again comes from the cache; other
// nodes build it again.
func TestSnapshotsKeepParsedPackages(t *testing.T) {
	st := newPlanStore(t)
	ctx := context.Background()
	hash := putPackageSnapshot(t, st, twoFilesPackage)
	loads := 0
	snaps := prepare.NewSnapshots(st, countingPackageLoader{loads: &loads})
	first, err := snaps.Load(ctx, hash, nil)
	require.NoError(t, err)
	again, err := snaps.Load(ctx, hash, nil)
	require.NoError(t, err)
	assert.Same(t, first, again)
	assert.Equal(t, 1, loads)
	_, err = snaps.Load(ctx, hash, []model.Node{{ID: "n1"}})
	require.NoError(t, err)
	assert.Equal(t, 2, loads, "other nodes are another package")

	_, err = prepare.NewSnapshots(st, nil).Load(ctx, hash, nil)
	assert.True(t, prepare.IsPackageError(err), "no loader: %v", err)
}

// A dry-run larger than its parallel slots take in planner.RoundsPerSlot
// rounds of default units is planned in larger units; an apply, or a
// dry-run asked for a size, keeps it.
func TestPackageSizesUnitsForItsParallelism(t *testing.T) {
	st := newPlanStore(t)
	var docs strings.Builder
	const n = 6000
	for i := range n {
		fmt.Fprintf(&docs, "---\napiVersion: cairn/v1\nkind: File\nmetadata: {name: f%d}\nspec: {path: /tmp/f%d, content: x}\n", i, i)
	}
	hash := putPackageSnapshot(t, st, docs.String())
	largest := func(p *prepare.PackagePlan) int {
		m := 0
		for _, u := range p.Units {
			m = max(m, u.Count)
		}
		return m
	}
	tests := []struct {
		name                   string
		mode                   contract.Mode
		parallelism, batchSize int
		units, largest         int
	}{
		{"default parallelism: default units", contract.ModeDryRun, 0, 0, 60, 100},
		{"one at a time: 25 rounds of 240", contract.ModeDryRun, 1, 0, 25, 240},
		{"two at a time: 50 rounds of 120", contract.ModeDryRun, 2, 0, 50, 120},
		{"an apply keeps units of 100", contract.ModeApply, 1, 0, 60, 100},
		{"an asked size is kept", contract.ModeDryRun, 1, 50, 120, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planPackage(t, st, prepare.PackageRun{Mode: tt.mode, SnapshotHash: hash, Parallelism: tt.parallelism, BatchSize: tt.batchSize})
			require.NoError(t, err)
			assert.Equal(t, n, p.Steps)
			assert.Len(t, p.Units, tt.units)
			assert.Equal(t, tt.largest, largest(p))
		})
	}
}
