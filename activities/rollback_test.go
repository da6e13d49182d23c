package activities_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/platform"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
)

func labelsDoc(url string, names ...string) string {
	doc := fmt.Sprintf("apiVersion: cairn/v1\nkind: Kind\nmetadata: {name: Label}\nspec: {base: http, wrap: body, defaults: {url: %q, path: /api/v2/labels}}\n", url)
	for _, n := range names {
		doc += fmt.Sprintf("---\napiVersion: cairn/v1\nkind: Label\nmetadata: {name: %s}\nspec: {name: %s}\n", n, n)
	}
	return doc
}

func recordedIDs(s *model.Stack) map[string]string {
	out := map[string]string{}
	for _, r := range s.Resources {
		out[r.PkgName] = r.ID
	}
	return out
}

// A rolled-back apply that had deleted an http object brings it back under
// a new id; the record written after the rollback names that id, so the
// next apply finds the object instead of creating a duplicate.
func TestRollbackRecordsRecreatedIDs(t *testing.T) {
	ctx := context.Background()
	plat := platform.New()
	srv := httptest.NewServer(plat)
	t.Cleanup(srv.Close)
	f := newFixture(t)
	reg := providers.NewRegistry(nil)
	reg.Register(providers.NewHTTP(srv.Client()))
	f.acts = activities.New(activities.Deps{Store: f.st, Registry: reg, Packages: prepare.GraphsLoader{}})

	v1 := f.snapshot(labelsDoc(srv.URL, "keep", "gone"))
	s := f.stack("")
	f.run("apply-1", f.prepare(contract.PrepareInput{ExecutionID: "apply-1", StackID: s.ID, SnapshotHash: v1}))
	before := f.record("apply-1", s.ID, v1, false)
	oldIDs := recordedIDs(before)
	require.Len(t, oldIDs, 2, "record after the first apply: %+v", before.Resources)
	require.NotEmpty(t, oldIDs["gone"], "record after the first apply: %+v", before.Resources)

	// The second apply deletes "gone", then fails and rolls back.
	v2 := f.snapshot(labelsDoc(srv.URL, "keep"))
	plan := f.prepare(contract.PrepareInput{ExecutionID: "apply-2", StackID: s.ID, SnapshotHash: v2})
	res := f.run("apply-2", plan)
	r := res["label/gone"]
	require.Equal(t, model.OutcomeDeleted, r.Outcome, "delete of gone: %+v (results %+v)", r, res)
	_, ok := plat.Object("labels", oldIDs["gone"])
	require.False(t, ok, "the delete left the object")
	recreated := map[string]string{}
	for _, u := range plan.Units {
		out, err := f.acts.Compensate(ctx, contract.CompensateInput{ExecutionID: "apply-2", Unit: u})
		require.NoError(t, err)
		for step, id := range out.Recreated {
			recreated[step] = id
		}
	}
	newID := recreated["label/gone"]
	require.Len(t, recreated, 1, "recreated %v, want label/gone under a new id (old %s)", recreated, oldIDs["gone"])
	require.NotEmpty(t, newID, "recreated %v, want label/gone under a new id (old %s)", recreated, oldIDs["gone"])
	require.NotEqual(t, oldIDs["gone"], newID, "recreated %v, want label/gone under a new id (old %s)", recreated, oldIDs["gone"])
	obj, ok := plat.Object("labels", newID)
	require.True(t, ok, "recreated object missing")
	require.Equal(t, "gone", obj["name"], "recreated object %v", obj)
	// A retried compensation reports the same id without recreating again.
	again, err := f.acts.Compensate(ctx, contract.CompensateInput{ExecutionID: "apply-2", Unit: unitOf(t, plan, "label/gone")})
	require.NoError(t, err, "retried compensation: %+v, %v; labels %v", again, err, plat.Labels())
	require.Equal(t, newID, again.Recreated["label/gone"], "retried compensation: %+v, %v; labels %v", again, err, plat.Labels())
	require.Len(t, plat.Labels(), 2, "retried compensation: %+v, %v; labels %v", again, err, plat.Labels())

	_, err = f.acts.WriteStackRecord(ctx, contract.WriteStackRecordInput{ExecutionID: "apply-2", StackID: s.ID, SnapshotHash: v2})
	require.NoError(t, err)
	after, err := f.st.GetStack(ctx, s.ID)
	require.NoError(t, err)
	ids := recordedIDs(after)
	require.Len(t, ids, 2, "record after the rollback: %v, want gone=%s keep=%s", ids, newID, oldIDs["keep"])
	require.Equal(t, newID, ids["gone"], "record after the rollback: %v, want gone=%s keep=%s", ids, newID, oldIDs["keep"])
	require.Equal(t, oldIDs["keep"], ids["keep"], "record after the rollback: %v, want gone=%s keep=%s", ids, newID, oldIDs["keep"])
	require.Equal(t, v1, after.SnapshotHash, "snapshot after the rollback %s, want the previous %s", after.SnapshotHash, v1)
	require.True(t, after.UpdatedAt.Equal(before.UpdatedAt), "updatedAt moved from %v to %v on an unchanged record", before.UpdatedAt, after.UpdatedAt)

	// Applying the first package again finds both objects: nothing new.
	res = f.run("apply-3", f.prepare(contract.PrepareInput{ExecutionID: "apply-3", StackID: s.ID, SnapshotHash: v1}))
	for id, r := range res {
		assert.Equal(t, model.OutcomeUnchanged, r.Outcome, "%s: %s %s", id, r.Outcome, r.Error)
	}
	n := len(plat.Labels())
	require.Equal(t, 2, n, "%d labels on the platform, want 2: %v", n, plat.Labels())
}

func unitOf(t *testing.T, plan *contract.PreparedPlan, step string) contract.Unit {
	t.Helper()
	for _, u := range plan.Units {
		if u.Step == step {
			return u
		}
	}
	t.Fatalf("no unit %s in %+v", step, plan.Units)
	return contract.Unit{}
}
