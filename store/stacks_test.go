package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func newTestStack(name string) *model.Stack {
	return &model.Stack{Name: name, Description: "test stack " + name, URLs: []string{"https://example.com/" + name + ".yaml"}}
}

func TestStackCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)

		a := newTestStack("a")
		must(t, s.CreateStack(ctx, a))
		require.Len(t, a.ID, 16, "generated id %q, want 16 hex characters", a.ID)
		require.False(t, a.CreatedAt.IsZero(), "CreatedAt unset")
		require.True(t, a.CreatedAt.Equal(a.UpdatedAt), "CreatedAt %v, UpdatedAt %v: want equal", a.CreatedAt, a.UpdatedAt)
		require.Same(t, time.UTC, a.CreatedAt.Location(), "CreatedAt %v: want UTC", a.CreatedAt)
		b := &model.Stack{ID: "chosen-id", Name: "b"} // no URLs: nil stays nil
		must(t, s.CreateStack(ctx, b))
		require.Equal(t, "chosen-id", b.ID, "CreateStack replaced a given id with")

		got, err := s.GetStack(ctx, a.ID)
		must(t, err)
		require.Equal(t, a, got, "GetStack = %#v\nwant %#v", got, a)
		gotB, err := s.GetStack(ctx, b.ID)
		must(t, err)
		require.Equal(t, b, gotB, "GetStack = %#v\nwant %#v", gotB, b)

		wantErr(t, s.CreateStack(ctx, &model.Stack{ID: a.ID, Name: "again"}), ErrConflict, a.ID)

		list, err := s.ListStacks(ctx)
		must(t, err)
		require.Len(t, list, 2, "ListStacks = %v, want [a b] in creation order", stackIDs(list))
		require.Equal(t, a.ID, list[0].ID, "ListStacks = %v, want [a b] in creation order", stackIDs(list))
		require.Equal(t, b.ID, list[1].ID, "ListStacks = %v, want [a b] in creation order", stackIDs(list))
		named, err := s.StacksNamed(ctx, "b")
		must(t, err)
		require.Len(t, named, 1, "StacksNamed(b) = %v, want [%s]", stackIDs(named), b.ID)
		require.Equal(t, b.ID, named[0].ID, "StacksNamed(b) = %v, want [%s]", stackIDs(named), b.ID)
		named, err = s.StacksNamed(ctx, "nobody")
		must(t, err)
		require.Empty(t, named, "StacksNamed(nobody) = %v, want none", stackIDs(named))

		must(t, s.DeleteStack(ctx, a.ID))
		_, err = s.GetStack(ctx, a.ID)
		wantErr(t, err, ErrNotFound, "stack", a.ID)
		wantErr(t, s.DeleteStack(ctx, a.ID), ErrNotFound, a.ID)
		list, err = s.ListStacks(ctx)
		must(t, err)
		require.Len(t, list, 1, "ListStacks after delete = %v", stackIDs(list))
		require.Equal(t, b.ID, list[0].ID, "ListStacks after delete = %v", stackIDs(list))
	})
}

func TestListStacksEmpty(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		list, err := freshStore(t, be).ListStacks(context.Background())
		must(t, err)
		require.NotNil(t, list, "ListStacks on an empty store = %#v, want an empty list", list)
		require.Empty(t, list, "ListStacks on an empty store = %#v, want an empty list", list)
	})
}

func stackIDs(list []*model.Stack) []string {
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// The S1 lifecycle of the pkger document: records after each apply.
var (
	labelRes = model.StackResource{Kind: "Label", ID: "LABEL_UUID", PkgName: "lucid_einstein"}
	toLabel  = []model.Association{{Kind: "Label", PkgName: "lucid_einstein"}}
	bucket   = model.StackResource{Kind: "Bucket", ID: "BUCKET_UUID", PkgName: "pristine_noir", Associations: toLabel}
	dash     = model.StackResource{Kind: "Dashboard", ID: "DASHBOARD_UUID", PkgName: "charmed_saratoba", Associations: toLabel}
	task     = model.StackResource{Kind: "Task", ID: "TASK_UUID", PkgName: "alcord_mumphries", Associations: toLabel}
	// Step 6: the label and every association to it are gone; the records
	// keep an explicit empty list.
	bucketNoAssoc = model.StackResource{Kind: "Bucket", ID: "BUCKET_UUID", PkgName: "pristine_noir", Associations: []model.Association{}}
	dashNoAssoc   = model.StackResource{Kind: "Dashboard", ID: "DASHBOARD_UUID", PkgName: "charmed_saratoba", Associations: []model.Association{}}
)

func TestWriteStackRecordLifecycle(t *testing.T) {
	steps := []struct {
		name      string
		execID    string
		resources []model.StackResource
		changed   bool
		moves     bool // UpdatedAt moves
	}{
		{"1 all new resources applied", "exec-1", []model.StackResource{labelRes, bucket, dash}, true, true},
		{"2 reapplied with no changes", "exec-2", []model.StackResource{labelRes, bucket, dash}, false, false},
		{"3 label renamed", "exec-3", []model.StackResource{labelRes, bucket, dash}, true, true},
		{"3 retried write of the same execution", "exec-3", []model.StackResource{labelRes, bucket, dash}, true, false},
		{"4 task added", "exec-4", []model.StackResource{labelRes, bucket, dash, task}, true, true},
		{"5 task removed", "exec-5", []model.StackResource{labelRes, bucket, dash}, true, true},
		{"6 label and its associations removed", "exec-6", []model.StackResource{bucketNoAssoc, dashNoAssoc}, true, true},
	}
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := newTestStack("S1")
		must(t, s.CreateStack(ctx, st))
		created := st.CreatedAt
		prev := st.UpdatedAt
		for i, step := range steps {
			time.Sleep(2 * time.Millisecond) // so a moved UpdatedAt is visibly later
			hash := "snap-" + step.execID
			got, err := s.WriteStackRecord(ctx, st.ID, step.execID, step.resources, hash, "", step.changed)
			must(t, err)
			require.True(t, got.CreatedAt.Equal(created), "step %s: CreatedAt moved from %v to %v", step.name, created, got.CreatedAt)
			moved := !got.UpdatedAt.Equal(prev)
			require.Equal(t, step.moves, moved, "step %s: UpdatedAt moved=%v (from %v to %v), want moved=%v", step.name, moved, prev, got.UpdatedAt, step.moves)
			if step.moves {
				require.True(t, got.UpdatedAt.After(prev), "step %s: UpdatedAt went from %v to %v", step.name, prev, got.UpdatedAt)
			}
			prev = got.UpdatedAt
			require.Equal(t, step.resources, got.Resources, "step %s: resources %#v, want %#v", step.name, got.Resources, step.resources)
			require.Equal(t, hash, got.SnapshotHash, "step %s: snapshot %q, want %q", step.name, got.SnapshotHash, hash)
			again, err := s.GetStack(ctx, st.ID)
			must(t, err)
			require.Equal(t, got, again, "step %s: GetStack %#v differs from the returned record %#v", step.name, again, got)
			if i == len(steps)-1 {
				// The stored record renders as the pkger document shows it.
				b, err := json.Marshal(again.Resources)
				must(t, err)
				want := `[{"kind":"Bucket","id":"BUCKET_UUID","pkgName":"pristine_noir","associations":[]},` +
					`{"kind":"Dashboard","id":"DASHBOARD_UUID","pkgName":"charmed_saratoba","associations":[]}]`
				require.Equal(t, want, string(b), "record JSON %s\nwant %s", b, want)
			}
		}

		// Replaying an earlier execution with other content changes nothing.
		before, err := s.GetStack(ctx, st.ID)
		must(t, err)
		replay, err := s.WriteStackRecord(ctx, st.ID, "exec-4", []model.StackResource{task}, "other", "", true)
		must(t, err)
		require.Equal(t, before, replay, "replayed exec-4 changed the stack: %#v\nwas %#v", replay, before)
	})
}

func TestWriteStackRecordKeepsNilAssociations(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := newTestStack("nil-vs-empty")
		must(t, s.CreateStack(ctx, st))
		in := []model.StackResource{
			{Kind: "Label", ID: "1", PkgName: "never"},
			{Kind: "Bucket", ID: "2", PkgName: "removed", Associations: []model.Association{}},
			{APIVersion: "cairn/v1", Kind: "File", ID: "3", PkgName: "some", Node: "node-1", Associations: toLabel},
		}
		_, err := s.WriteStackRecord(ctx, st.ID, "e", in, "h", "", true)
		must(t, err)
		got, err := s.GetStack(ctx, st.ID)
		must(t, err)
		require.Nil(t, got.Resources[0].Associations, "nil associations came back as")
		require.NotNil(t, got.Resources[1].Associations, "empty associations came back as %#v", got.Resources[1].Associations)
		require.Empty(t, got.Resources[1].Associations, "empty associations came back as")
		require.Equal(t, in, got.Resources, "resources")
	})
}

func TestWriteStackRecordErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		_, err := s.WriteStackRecord(ctx, "missing", "e1", nil, "", "", true)
		wantErr(t, err, ErrNotFound, "missing")
		st := newTestStack("x")
		must(t, s.CreateStack(ctx, st))
		_, err = s.WriteStackRecord(ctx, st.ID, "", nil, "", "", true)
		require.Error(t, err, "empty execution id accepted")
		// Deleting the stack forgets its executions: a new stack with the
		// same id takes a record from the same execution id.
		_, err = s.WriteStackRecord(ctx, st.ID, "e1", []model.StackResource{labelRes}, "h1", "", true)
		must(t, err)
		must(t, s.DeleteStack(ctx, st.ID))
		must(t, s.CreateStack(ctx, &model.Stack{ID: st.ID, Name: "again"}))
		got, err := s.WriteStackRecord(ctx, st.ID, "e1", []model.StackResource{bucket}, "h2", "", true)
		must(t, err)
		require.Equal(t, "h2", got.SnapshotHash, "record of the recreated stack: %#v", got)
		require.Len(t, got.Resources, 1, "record of the recreated stack: %#v", got)
		require.Equal(t, bucket.ID, got.Resources[0].ID, "record of the recreated stack: %#v", got)
	})
}

func TestWriteStackRecordConcurrentRetries(t *testing.T) {
	// Activity retries of one execution may overlap; exactly one write
	// applies and all callers see the same record.
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := newTestStack("race")
		must(t, s.CreateStack(ctx, st))
		const callers = 10
		results := make([]*model.Stack, callers)
		errs := make([]error, callers)
		done := make(chan int)
		for i := range callers {
			go func() {
				time.Sleep(time.Millisecond)
				results[i], errs[i] = s.WriteStackRecord(ctx, st.ID, "same-exec", []model.StackResource{labelRes}, "h", "", true)
				done <- i
			}()
		}
		for range callers {
			<-done
		}
		for i := range callers {
			must(t, errs[i])
			require.Equal(t, results[0], results[i], "caller %d saw %#v, caller 0 saw %#v", i, results[i], results[0])
		}
	})
}

// The cluster of a stack's record round-trips through every read, goes
// with the record's write (a retried write changes nothing), keeps the
// cluster from being deleted, and is cleared by a write without one.
func TestWriteStackRecordKeepsTheCluster(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := newTestStack("clustered")
		must(t, s.CreateStack(ctx, st))
		fresh, err := s.GetStack(ctx, st.ID)
		must(t, err)
		require.Empty(t, fresh.ClusterID, "a new stack has a cluster")

		onNode := []model.StackResource{{Kind: "File", ID: "/etc/motd", PkgName: "motd", Node: "n1"}}
		got, err := s.WriteStackRecord(ctx, st.ID, "exec-1", onNode, "h1", "c1", true)
		must(t, err)
		require.Equal(t, "c1", got.ClusterID, "returned record")
		again, err := s.GetStack(ctx, st.ID)
		must(t, err)
		require.Equal(t, got, again, "GetStack")
		listed, err := s.ListStacks(ctx)
		must(t, err)
		require.Len(t, listed, 1)
		require.Equal(t, "c1", listed[0].ClusterID, "ListStacks")
		named, err := s.StacksNamed(ctx, "clustered")
		must(t, err)
		require.Len(t, named, 1)
		require.Equal(t, "c1", named[0].ClusterID, "StacksNamed")

		retried, err := s.WriteStackRecord(ctx, st.ID, "exec-1", onNode, "h1", "c2", true)
		must(t, err)
		require.Equal(t, "c1", retried.ClusterID, "a retried write moved the cluster")

		must(t, s.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1"}))
		wantErr(t, s.DeleteCluster(ctx, "c1"), ErrConflict, `cluster "c1"`, st.ID)

		cleared, err := s.WriteStackRecord(ctx, st.ID, "exec-2", nil, "", "", false)
		must(t, err)
		require.Empty(t, cleared.ClusterID, "a write without a cluster kept it")
		require.True(t, cleared.UpdatedAt.Equal(got.UpdatedAt), "UpdatedAt moved on an unchanged write")
		must(t, s.DeleteCluster(ctx, "c1"))
	})
}
