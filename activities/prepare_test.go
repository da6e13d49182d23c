package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
	"github.com/stretchr/testify/require"
)

type fixture struct {
	t    *testing.T
	st   store.Store
	acts *activities.Activities
	root string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, activities.Deps{})
}

// newFixtureWith is newFixture with deps' Secrets and Env.
func newFixtureWith(t *testing.T, deps activities.Deps) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	acts := activities.New(activities.Deps{Store: st, Registry: reg, Packages: prepare.GraphsLoader{}, Secrets: deps.Secrets, Env: deps.Env})
	return &fixture{t: t, st: st, acts: acts, root: t.TempDir()}
}

func (f *fixture) snapshot(docs string) string {
	f.t.Helper()
	content, err := prepare.EncodePackageSnapshot(prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs})
	if err != nil {
		f.t.Fatal(err)
	}
	hash, err := f.st.PutSnapshot(context.Background(), "package", content)
	if err != nil {
		f.t.Fatal(err)
	}
	return hash
}

func (f *fixture) stack(hash string, resources ...model.StackResource) *model.Stack {
	f.t.Helper()
	s := &model.Stack{Name: "s", URLs: []string{}}
	ctx := context.Background()
	if err := f.st.CreateStack(ctx, s); err != nil {
		f.t.Fatal(err)
	}
	if hash != "" || len(resources) > 0 {
		if _, err := f.st.WriteStackRecord(ctx, s.ID, "seed", resources, hash, "", true); err != nil {
			f.t.Fatal(err)
		}
	}
	return s
}

func (f *fixture) prepare(in contract.PrepareInput) *contract.PreparedPlan {
	f.t.Helper()
	if in.ExecutionID == "" {
		in.ExecutionID = "exec-" + strings.ReplaceAll(f.t.Name(), "/", "-")
	}
	if in.Mode == "" {
		in.Mode = contract.ModeApply
	}
	plan, err := f.acts.Prepare(context.Background(), in)
	if err != nil {
		f.t.Fatal(err)
	}
	return plan
}

func filesDocs(dir string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: cairn/v1\nkind: Directory\nmetadata: {name: d}\nspec: {path: %s}\n", dir)
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: File\nmetadata: {name: f%03d}\nspec: {path: %s/f%03d, content: x}\n", i, dir, i)
	}
	return b.String()
}

func TestPrepareGroupsStepsByShape(t *testing.T) {
	f := newFixture(t)
	docs := filesDocs(f.root+"/d", 250) + fmt.Sprintf(`---
apiVersion: cairn/v1
kind: File
metadata: {name: templated}
spec: {path: %[1]s/d/t, content: "{{ env \"HOME\" }}"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: reload}
spec: {command: "true"}
dependsOn: [File/f000, File/f249]
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: patient}
spec: {command: "true"}
meta: {retry: 2}
`, f.root)
	hash := f.snapshot(docs)
	s := f.stack("")
	plan := f.prepare(contract.PrepareInput{StackID: s.ID, SnapshotHash: hash})
	require.Equal(t, 254, plan.Steps)
	require.Empty(t, plan.Shards)
	var counts []int
	for i, u := range plan.Units {
		require.Equal(t, i, u.Index)
		for _, d := range u.Deps {
			require.Less(t, d, u.Index, "unit %s depends on a later unit", u.Summary)
		}
		counts = append(counts, u.Count)
	}
	// The directory and its files share units of at most 100 steps with
	// the templated file and the exec that depends on two of them; the
	// exec with its own retry budget runs alone.
	require.Equal(t, []int{100, 100, 53, 1}, counts)
	require.Equal(t, []int{0}, plan.Units[1].Deps)
	require.Equal(t, []int{0}, plan.Units[2].Deps, "f000 is in unit 0, f249 in unit 2 itself")
	require.Equal(t, "exec/patient", plan.Units[3].Step)
	// The unit names its steps; its summary, the first and the last.
	require.Equal(t, "apply 100 steps: directory/d … "+plan.Units[0].Steps[99], plan.Units[0].Summary)
	require.Equal(t, "directory/d", plan.Units[0].Steps[0])

	steps, err := prepare.AllSteps(context.Background(), f.st, "exec-"+strings.ReplaceAll(t.Name(), "/", "-"))
	require.NoError(t, err)
	var unit2 []string
	for _, s := range steps {
		if s.Unit == 2 {
			unit2 = append(unit2, s.ID)
		}
	}
	require.Equal(t, []string{"file/f249", "file/templated", "exec/reload"}, unit2[len(unit2)-3:])
}

func TestPrepareOrdersDeletesAfterFormerDependents(t *testing.T) {
	f := newFixture(t)
	kindsDoc := `apiVersion: cairn/v1
kind: Kind
metadata: {name: Label}
spec: {base: http, wrap: body, defaults: {url: "http://127.0.0.1:1", path: /api/v2/labels}}
---
apiVersion: cairn/v1
kind: Kind
metadata: {name: Bucket}
spec: {base: http, wrap: body, defaults: {url: "http://127.0.0.1:1", path: /api/v2/buckets}, associations: {path: /labels, field: labelID}}
`
	label := "---\napiVersion: cairn/v1\nkind: Label\nmetadata: {name: l}\nspec: {name: l}\n"
	bucket := func(assoc bool) string {
		doc := "---\napiVersion: cairn/v1\nkind: Bucket\nmetadata: {name: b}\nspec: {name: b}\n"
		if assoc {
			doc += "associations: [{kind: Label, name: l}]\n"
		}
		return doc
	}
	oldHash := f.snapshot(kindsDoc + label + bucket(true))
	record := []model.StackResource{
		{Kind: "Label", ID: "L1", PkgName: "l"},
		{Kind: "Bucket", ID: "B1", PkgName: "b", Associations: []model.Association{{Kind: "Label", PkgName: "l"}}},
	}
	tests := []struct {
		name     string
		docs     string
		mode     contract.Mode
		wantDeps map[string][]string // step → the steps its unit waits for
	}{
		{"label removed, bucket stays", kindsDoc + bucket(false), contract.ModeApply,
			map[string][]string{"label/l": {"bucket/b"}}},
		{"both removed", kindsDoc, contract.ModeApply,
			map[string][]string{"label/l": {"bucket/b"}, "bucket/b": nil}},
		{"destroy", "", contract.ModeDestroy,
			map[string][]string{"label/l": {"bucket/b"}, "bucket/b": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := f.stack(oldHash, record...)
			in := contract.PrepareInput{StackID: s.ID, Mode: tt.mode}
			if tt.docs != "" {
				in.SnapshotHash = f.snapshot(tt.docs)
			}
			plan := f.prepare(in)
			byIndex := map[int]contract.Unit{}
			byStep := map[string]contract.Unit{}
			for _, u := range plan.Units {
				byIndex[u.Index] = u
				byStep[u.Step] = u
			}
			// Deletes share a unit, in an order where each comes after
			// what it waits for; a delete waiting for a step that stays
			// waits for that step's unit.
			execID := "exec-" + strings.ReplaceAll(f.t.Name(), "/", "-")
			pos := map[string]int{}
			unitOf := map[string]int{}
			for _, u := range plan.Units {
				for i, s := range f.unitSteps(execID, u) {
					pos[s.ID], unitOf[s.ID] = i, u.Index
				}
			}
			for step, want := range tt.wantDeps {
				for _, w := range want {
					if unitOf[w] == unitOf[step] {
						require.Less(t, pos[w], pos[step], "%s runs after %s in their unit", step, w)
					} else {
						require.Contains(t, byIndex[unitOf[step]].Deps, unitOf[w], "%s waits for %s", step, w)
					}
				}
			}
			u := byIndex[unitOf["label/l"]]
			require.True(t, u.Delete, "label unit %+v", u)
			require.Contains(t, u.Summary, "delete")
			_ = byStep
		})
	}
}

func TestPrepareDeletesByRecordWhenThePreviousSnapshotIsGone(t *testing.T) {
	f := newFixture(t)
	kindsDoc := "apiVersion: cairn/v1\nkind: Kind\nmetadata: {name: Label}\nspec: {base: http, wrap: body, defaults: {url: \"http://127.0.0.1:1\", path: /api/v2/labels}}\n"
	s := f.stack("0000000000000000000000000000000000000000000000000000000000000000", model.StackResource{Kind: "Label", ID: "L9", PkgName: "gone"})
	plan := f.prepare(contract.PrepareInput{StackID: s.ID, SnapshotHash: f.snapshot(kindsDoc)})
	if len(plan.Units) != 1 || !plan.Units[0].Delete {
		t.Fatalf("units %+v", plan.Units)
	}
	steps, err := prepare.AllSteps(context.Background(), f.st, "exec-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Base != "http" || steps[0].ObjectID != "L9" || steps[0].Spec["path"] != "/api/v2/labels" {
		t.Fatalf("delete step %+v", steps[0])
	}
}

func TestPrepareShardsLargePlans(t *testing.T) {
	f := newFixture(t)
	s := f.stack("")
	execID := "exec-shards"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: s.ID, SnapshotHash: f.snapshot(filesDocs(f.root+"/d", 45)), BatchSize: 10, ShardUnits: 2})
	// 1 directory unit + 5 batches = 6 units in 3 shards.
	if len(plan.Units) != 0 || len(plan.Shards) != 3 {
		t.Fatalf("plan %+v", plan)
	}
	total := 0
	for _, sh := range plan.Shards {
		if sh.Pages != 1 {
			t.Fatalf("shard %+v: want its units in one page", sh)
		}
		units, err := f.acts.LoadUnits(context.Background(), contract.LoadUnitsInput{ExecutionID: execID, Shard: sh.Index, Paged: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(units) != sh.Units || units[0].Index != sh.First {
			t.Fatalf("shard %+v holds %+v", sh, units)
		}
		total += sh.Steps
	}
	if total != 46 {
		t.Fatalf("shards hold %d steps, want 46", total)
	}
}

// TestRetryAfterACrashReportsTheChange: an attempt recorded the
// before-state, changed the file and died before recording the result; the
// retry finds the file converged and still reports the change as this
// execution's, so it is recorded and compensated. A step whose outputs
// record exists is not run again.
func TestRetryAfterACrashReportsTheChange(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.stack("")
	execID := "exec-crash"
	path := filepath.Join(f.root, "motd")
	docs := fmt.Sprintf("apiVersion: cairn/v1\nkind: File\nmetadata: {name: motd}\nspec: {path: %s, content: new}\n", path)
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: s.ID, SnapshotHash: f.snapshot(docs)})
	u := plan.Units[0]
	// What the dead attempt left: its before-state, and the file changed.
	before, _ := json.Marshal(map[string]any{"action": "update", "before": map[string]any{"exists": true, "id": path}})
	if err := f.st.PutStepData(ctx, execID, u.Step, contract.DataBefore, before); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	retry, err := f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Unit: u, Rerun: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := retry.Steps[0]; r.Outcome != model.OutcomeUpdated || r.Action != model.ActionUpdate {
		t.Fatalf("retry reported %+v, want the first attempt's update", r)
	}
	// The same step in a fresh execution finds nothing to do.
	other := f.prepare(contract.PrepareInput{ExecutionID: "exec-fresh", StackID: s.ID, SnapshotHash: f.snapshot(docs)})
	fresh, err := f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: "exec-fresh", Unit: other.Units[0]})
	if err != nil || fresh.Steps[0].Outcome != model.OutcomeUnchanged {
		t.Fatalf("fresh execution: %+v, %v", fresh, err)
	}
	// Once converged and recorded, a rerun returns the recorded result
	// without touching the file again.
	if err := os.WriteFile(path, []byte("drifted"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Unit: u, Rerun: true})
	if err != nil || again.Steps[0].Outcome != model.OutcomeUpdated {
		t.Fatalf("rerun: %+v, %v", again, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "drifted" {
		t.Fatalf("a recorded step ran again: %q", b)
	}
}

// unitSteps reads a unit's steps as Prepare kept them, in the order they
// run.
func (f *fixture) unitSteps(execID string, u contract.Unit) []*planner.StoredStep {
	f.t.Helper()
	ctx := context.Background()
	if !u.Batch {
		raw, err := f.st.GetStepData(ctx, execID, u.Step, contract.DataStep)
		require.NoError(f.t, err)
		var s planner.StoredStep
		require.NoError(f.t, json.Unmarshal(raw, &s))
		return []*planner.StoredStep{&s}
	}
	raw, err := f.st.GetStepData(ctx, execID, contract.UnitKey(u.Index), contract.DataUnit)
	require.NoError(f.t, err)
	var steps []*planner.StoredStep
	require.NoError(f.t, json.Unmarshal(raw, &steps))
	return steps
}
