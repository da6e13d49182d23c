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

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
)

// parsedSnapshot validates docs as the API does and returns the snapshot
// content carrying the parsed package next to sources.
func parsedSnapshot(t *testing.T, docs string, sources ...prepare.SnapshotSource) (*graphs.Documents, []byte) {
	t.Helper()
	parsed, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "p.yaml", Format: graphs.FormatYAML, Data: []byte(docs)})
	require.NoError(t, err)
	content, err := prepare.EncodeParsedPackageSnapshot(parsed, sources...)
	require.NoError(t, err)
	return parsed, content
}

func TestPrepareUsesParsedSnapshot(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.root, "d")
	_, content := parsedSnapshot(t, filesDocs(dir, 30), prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: "kind: [unclosed"})
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
	_, content := parsedSnapshot(t, docs, prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs})
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

	// A single step keeps its own fsyncs: the new file (made unnamed,
	// synced before it is linked in) and the directory, during the write.
	var one syncRecorder
	_, err = f.acts.ApplyStep(one.ctx(t, f.st, execID, nil), contract.UnitInput{ExecutionID: execID, Unit: *single})
	require.NoError(t, err)
	slices.Sort(one.paths)
	wantOne := []string{dir, filepath.Join(dir, "alone")}
	require.True(t, slices.Equal(one.paths, wantOne), "single step synced %v, want %v", one.paths, wantOne)
}
