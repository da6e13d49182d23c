package activities_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
)

// parsedSnapshot validates docs as the API does and returns the snapshot
// content carrying the parsed package next to sources.
func parsedSnapshot(t *testing.T, docs string, sources ...activities.SnapshotSource) (*graphs.Documents, []byte) {
	t.Helper()
	parsed, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "p.yaml", Format: graphs.FormatYAML, Data: []byte(docs)})
	require.NoError(t, err)
	content, err := activities.EncodeParsedPackageSnapshot(parsed, sources...)
	require.NoError(t, err)
	return parsed, content
}

func TestLoaderReadsParsedAndSourceSnapshots(t *testing.T) {
	docs := `apiVersion: cairn/v1
kind: File
metadata: {name: a}
spec: {path: /tmp/a, content: "x", mode: 420}
---
apiVersion: cairn/v1
kind: File
metadata: {name: b}
spec: {path: /tmp/b, content: "{{ .deps.a.checksum }}"}
dependsOn: [File/a]
`
	valid := activities.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs}
	// Sources the parser refuses: a snapshot that still loads did not
	// parse them.
	broken := activities.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: "kind: [unclosed"}
	parsed, withParsed := parsedSnapshot(t, docs, broken)
	_, again := parsedSnapshot(t, docs, broken)
	require.Equal(t, again, withParsed, "equal packages encode to different snapshots")
	old, err := activities.EncodePackageSnapshot(valid)
	require.NoError(t, err)
	// Readers of the sources alone (export, older workers) still find them.
	snap, err := activities.DecodePackageSnapshot(withParsed)
	require.NoError(t, err, "sources of the parsed snapshot: %+v, %v", snap, err)
	require.Len(t, snap.Sources, 1, "sources of the parsed snapshot: %+v, %v", snap, err)
	require.Equal(t, broken, snap.Sources[0], "sources of the parsed snapshot: %+v, %v", snap, err)
	tests := []struct {
		name    string
		content []byte
	}{
		{"parsed package, sources not parsed", withParsed},
		{"sources only", old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := activities.GraphsLoader{}.Load(context.Background(), tt.content, nil)
			require.NoError(t, err)
			require.Equal(t, parsed.Package.Resources, got.Package.Resources, "resources differ from the parser's:\n got %#v\nwant %#v", got.Package.Resources, parsed.Package.Resources)
			require.Equal(t, 1, got.Package.Resources[0].Pos.Line, "positions lost: %+v", got.Package.Resources[1].Pos)
			require.NotEqual(t, 0, got.Package.Resources[1].Pos.Line, "positions lost: %+v", got.Package.Resources[1].Pos)
			_, ok := got.Package.Resources[0].Spec["mode"].(int64)
			require.True(t, ok, "mode is %T, want the parser's int64", got.Package.Resources[0].Spec["mode"])
			require.Len(t, got.Steps, 2, "%d steps, catalogue %v", len(got.Steps), got.Catalogue)
			require.NotNil(t, got.Catalogue, "%d steps, catalogue %v", len(got.Steps), got.Catalogue)
		})
	}
	// Source-only snapshot of a package defining a kind: keeps the sources
	// only, so the worker learns the kind by parsing.
	kindDocs := `apiVersion: cairn/v1
kind: Kind
metadata: {name: Motd}
spec: {base: file}
---
apiVersion: cairn/v1
kind: Motd
metadata: {name: m}
spec: {path: /tmp/m, content: hi}
`
	kindSrc := activities.SnapshotSource{Name: "k.yaml", Format: "yaml", Data: kindDocs}
	parsedKinds, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "k.yaml", Format: graphs.FormatYAML, Data: []byte(kindDocs)})
	require.NoError(t, err)
	content, err := activities.EncodeParsedPackageSnapshot(parsedKinds, kindSrc)
	require.NoError(t, err)
	plain, _ := activities.EncodePackageSnapshot(kindSrc)
	require.Equal(t, plain, content, "a package defining kinds carries a parsed form")
}

func TestPrepareUsesParsedSnapshot(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.root, "d")
	_, content := parsedSnapshot(t, filesDocs(dir, 30), activities.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: "kind: [unclosed"})
	hash, err := f.st.PutSnapshot(context.Background(), "package", content)
	require.NoError(t, err)
	plan := f.prepare(contract.PrepareInput{StackID: f.stack("").ID, SnapshotHash: hash})
	require.Equal(t, 31, plan.Steps, "%d steps, want 31", plan.Steps)
}

// syncRecorder records fsyncs and whether, at each, a step's outcome was
// already recorded.
type syncRecorder struct {
	mu            sync.Mutex
	paths         []string
	recordedEarly []string
}

func (r *syncRecorder) ctx(t *testing.T, st store.Store, execID string, stepIDs []string) context.Context {
	return providers.WithSyncObserver(context.Background(), func(p string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.paths = append(r.paths, p)
		for _, id := range stepIDs {
			if _, err := st.GetStepData(context.Background(), execID, id, contract.DataOutputs); err == nil {
				r.recordedEarly = append(r.recordedEarly, id)
			}
		}
	})
}

func TestApplyBatchSyncsOnceBeforeRecording(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.root, "d")
	docs := filesDocs(dir, 5) + fmt.Sprintf(`---
apiVersion: cairn/v1
kind: File
metadata: {name: alone}
spec: {path: %s/alone, content: "{{ env \"HOME\" }}x"}
meta: {timeout: 30s}
`, dir)
	_, content := parsedSnapshot(t, docs, activities.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs})
	hash, err := f.st.PutSnapshot(context.Background(), "package", content)
	require.NoError(t, err)
	execID := "exec-sync"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: hash})
	require.NoError(t, os.Mkdir(dir, 0o755))
	var batch, single *contract.Unit
	for i, u := range plan.Units {
		switch {
		case u.Batch:
			batch = &plan.Units[i]
		case strings.HasSuffix(u.Step, "/alone"):
			single = &plan.Units[i]
		}
	}
	require.NotNil(t, batch, "units %+v", plan.Units)
	require.Equal(t, 6, batch.Count, "units %+v", plan.Units) // the directory and its files
	require.NotNil(t, single, "units %+v", plan.Units)
	var stepIDs []string
	for i := range 5 {
		stepIDs = append(stepIDs, fmt.Sprintf("file/f%03d", i))
	}

	var rec syncRecorder
	res, err := f.acts.ApplyBatch(rec.ctx(t, f.st, execID, stepIDs), contract.UnitInput{ExecutionID: execID, Unit: *batch})
	require.NoError(t, err)
	for _, s := range res.Steps {
		require.Equal(t, model.OutcomeCreated, s.Outcome, "step %+v", s)
	}
	want := []string{dir}
	for i := range 5 {
		name := fmt.Sprintf("f%03d", i)
		want = append(want, filepath.Join(dir, name))
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "%s: %q %v", name, got, err)
		require.Equal(t, "x", string(got), "%s: %q %v", name, got, err)
	}
	slices.Sort(want)
	slices.Sort(rec.paths)
	require.True(t, slices.Equal(rec.paths, want), "batch synced %v, want each file and the directory once: %v", rec.paths, want)
	require.LessOrEqual(t, len(rec.recordedEarly), 0, "outcomes recorded before the sync: %v", rec.recordedEarly)
	for _, id := range stepIDs {
		_, err := f.st.GetStepData(context.Background(), execID, id, contract.DataOutputs)
		require.NoError(t, err, "outputs of %s: %v", id, err)
	}

	// A single step keeps its own fsyncs: the temporary file and the
	// directory, during the write.
	var one syncRecorder
	_, err = f.acts.ApplyStep(one.ctx(t, f.st, execID, nil), contract.UnitInput{ExecutionID: execID, Unit: *single})
	require.NoError(t, err)
	slices.Sort(one.paths)
	wantOne := []string{dir, filepath.Join(dir, ".alone.cairn-tmp")}
	require.True(t, slices.Equal(one.paths, wantOne), "single step synced %v, want %v", one.paths, wantOne)
}
