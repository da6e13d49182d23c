package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// run runs every unit of a prepared plan, one after another, as the
// executor would with parallelism 1, and returns the results by step.
func (f *fixture) run(execID string, plan *contract.PreparedPlan) map[string]contract.StepResult {
	f.t.Helper()
	out := map[string]contract.StepResult{}
	for _, u := range plan.Units {
		name := f.acts.ApplyStep
		if u.Batch {
			name = f.acts.ApplyBatch
		}
		res, err := name(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u})
		require.NoError(f.t, err, "%s: %v", u.Step, err)
		res.Expand()
		for _, r := range res.Steps {
			out[r.StepID] = r
		}
	}
	return out
}

func (f *fixture) record(execID, stackID, hash string, destroy bool) *model.Stack {
	f.t.Helper()
	ctx := context.Background()
	_, err := f.acts.WriteStackRecord(ctx, contract.WriteStackRecordInput{
		ExecutionID: execID, StackID: stackID, SnapshotHash: hash, Destroy: destroy, Changed: true,
	})
	require.NoError(f.t, err)
	st, err := f.st.GetStack(ctx, stackID)
	require.NoError(f.t, err)
	return st
}

// A destroy that leaves resources behind records them as they were: a
// resource that never had associations gains no empty list, one whose
// associations were removed keeps its empty list, others keep theirs
// (model.StackResource's nil/empty distinction).
func TestDestroyLeftoversKeepTheirAssociations(t *testing.T) {
	f := newFixture(t)
	docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: never}
spec: {path: %[1]s/never, content: x}
---
apiVersion: cairn/v1
kind: File
metadata: {name: removed}
spec: {path: %[1]s/removed, content: x}
---
apiVersion: cairn/v1
kind: File
metadata: {name: some}
spec: {path: %[1]s/some, content: x}
---
apiVersion: cairn/v1
kind: File
metadata: {name: gone}
spec: {path: %[1]s/gone, content: x}
`, f.root)
	hash := f.snapshot(docs)
	recorded := []model.StackResource{
		{Kind: "File", ID: f.root + "/never", PkgName: "never"},
		{Kind: "File", ID: f.root + "/removed", PkgName: "removed", Associations: []model.Association{}},
		{Kind: "File", ID: f.root + "/some", PkgName: "some", Associations: []model.Association{{Kind: "Label", PkgName: "l"}}},
		{Kind: "File", ID: f.root + "/gone", PkgName: "gone"},
	}
	s := f.stack(hash, recorded...)
	// A directory where a file is recorded makes its delete fail.
	for _, name := range []string{"never", "removed", "some"} {
		require.NoError(t, os.MkdirAll(filepath.Join(f.root, name, "sub"), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "gone"), []byte("x"), 0o644))
	plan := f.prepare(contract.PrepareInput{ExecutionID: "destroy-1", StackID: s.ID, Mode: contract.ModeDestroy})
	failed := 0
	for _, r := range f.run("destroy-1", plan) {
		if r.Outcome == model.OutcomeFailed {
			failed++
		}
	}
	require.Equal(t, 3, failed, "%d deletes failed, want 3", failed)
	left := f.record("destroy-1", s.ID, "", true)
	byName := map[string]model.StackResource{}
	for _, r := range left.Resources {
		byName[r.PkgName] = r
	}
	require.Len(t, left.Resources, 3, "left %+v (snapshot %q)", left.Resources, left.SnapshotHash)
	require.Equal(t, hash, left.SnapshotHash, "left %+v (snapshot %q)", left.Resources, left.SnapshotHash)
	a := byName["never"].Associations
	assert.Nil(t, a, "never: associations %#v, want nil", a)
	a = byName["removed"].Associations
	require.NotNil(t, a, "removed: associations %#v, want empty", a)
	assert.Empty(t, a, "removed: associations %#v, want empty", a)
	a = byName["some"].Associations
	require.Len(t, a, 1, "some: associations")
	assert.Equal(t, "l", a[0].PkgName, "some: associations %#v", a)
	b, err := json.Marshal(left.Resources)
	require.NoError(t, err)
	n := strings.Count(string(b), `"associations":[]`)
	require.Equal(t, 1, n, "record JSON has %d empty association lists, want 1: %s", n, b)
}

// A destroy of a file whose content is a template of its own deletes it:
// the template stays verbatim for the provider instead of being rendered
// (and dropped) with the delete's expression context.
func TestDestroyTemplatedFile(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.root, "greeting")
	hash := f.snapshot(fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: greeting}
spec: {path: %s, template: "hello {{ .name }}", vars: {name: world}}
`, path))
	require.NoError(t, os.WriteFile(path, []byte("hello world"), 0o644))
	s := f.stack(hash, model.StackResource{Kind: "File", ID: path, PkgName: "greeting"})
	plan := f.prepare(contract.PrepareInput{ExecutionID: "destroy-tpl", StackID: s.ID, Mode: contract.ModeDestroy})
	results := f.run("destroy-tpl", plan)
	require.Len(t, results, 1, "results")
	for id, r := range results {
		require.Equal(t, model.OutcomeDeleted, r.Outcome, "%s: outcome %s (%s), want deleted", id, r.Outcome, r.Error)
	}
	_, err := os.Stat(path)
	require.True(t, os.IsNotExist(err), "file still there: %v", err)
}
