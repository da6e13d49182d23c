package stepdata

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
)

func TestStackRecord(t *testing.T) {
	stack := &model.Stack{SnapshotHash: "old", ClusterID: "c-old", Resources: []model.StackResource{
		{Kind: "File", PkgName: "kept", ID: "/kept"},
		{Kind: "File", PkgName: "failed", ID: "/failed"},
		{Kind: "Http", PkgName: "undone", ID: "obj-1"},
		{Kind: "File", PkgName: "gone", ID: "/gone"},
		{Kind: "File", PkgName: "stuck", ID: "/stuck"},
	}}
	steps := []prepare.IndexEntry{
		{ID: "file/kept", Kind: "file", RecordKind: "File", Name: "kept"},
		{ID: "file/new", Kind: "file", RecordKind: "File", Name: "new", Associations: []model.Ref{{Kind: "Label", Name: "l"}}},
		{ID: "file/failed", Kind: "file", RecordKind: "File", Name: "failed"},
		{ID: "http/undone", Kind: "http", RecordKind: "Http", Name: "undone"},
		{ID: "file/gone", Kind: "file", RecordKind: "File", Name: "gone", Delete: true},
		{ID: "file/stuck", Kind: "file", RecordKind: "File", Name: "stuck", Delete: true},
	}
	run := StackRun{Steps: steps, SnapshotHash: "new", ClusterID: "c-new", Converged: map[string]Converged{
		"file/kept": {ID: "/kept"}, "file/new": {ID: "/new"}, "http/undone": {ID: "obj-2"}, "file/gone": {Deleted: true},
	}}

	resources, hash, cluster := StackRecord(stack, run)
	assert.Equal(t, []model.StackResource{
		{Kind: "File", PkgName: "kept", ID: "/kept"},
		{Kind: "File", PkgName: "new", ID: "/new", Associations: []model.Association{{Kind: "Label", PkgName: "l"}}},
		{Kind: "File", PkgName: "failed", ID: "/failed"},
		{Kind: "Http", PkgName: "undone", ID: "obj-2"},
		{Kind: "File", PkgName: "stuck", ID: "/stuck"},
	}, resources, "a failed step keeps its entry, a failed delete its resource")
	assert.Equal(t, "new", hash)
	assert.Equal(t, "c-new", cluster)

	run.Undone = map[string]Compensated{"http/undone": {Recreated: "obj-3"}}
	resources, hash, cluster = StackRecord(stack, run)
	assert.Contains(t, resources, model.StackResource{Kind: "Http", PkgName: "undone", ID: "obj-3"}, "an undone step keeps its entry under the recreated id")
	assert.Equal(t, "old", hash, "a rollback keeps the previous package")
	assert.Equal(t, "c-old", cluster)

	destroy := StackRun{Steps: steps[4:5], Destroy: true, ClusterID: "c-new", Converged: map[string]Converged{"file/gone": {Deleted: true}}}
	resources, hash, cluster = StackRecord(&model.Stack{Resources: stack.Resources[3:4], SnapshotHash: "old"}, destroy)
	assert.Empty(t, resources)
	assert.Empty(t, hash, "a destroy that left nothing clears the snapshot")
	assert.Empty(t, cluster)
}

// A partial run (a watched change's repair) rewrites the entries of the
// resources it ran and keeps every other entry where it was.
func TestStackRecordOfAPartialRun(t *testing.T) {
	stack := &model.Stack{SnapshotHash: "h", Resources: []model.StackResource{
		{Kind: "File", PkgName: "a", ID: "/a"},
		{Kind: "File", PkgName: "b", ID: "/b"},
		{Kind: "Directory", PkgName: "d", ID: "/d"},
		{Kind: "File", PkgName: "c", ID: "/c"},
	}}
	tests := []struct {
		name      string
		steps     []prepare.IndexEntry
		converged map[string]Converged
		want      []model.StackResource
	}{
		{"one resource repaired", []prepare.IndexEntry{{ID: "file/b", Kind: "file", RecordKind: "File", Name: "b"}},
			map[string]Converged{"file/b": {ID: "/b2"}},
			[]model.StackResource{{Kind: "File", PkgName: "a", ID: "/a"}, {Kind: "File", PkgName: "b", ID: "/b2"},
				{Kind: "Directory", PkgName: "d", ID: "/d"}, {Kind: "File", PkgName: "c", ID: "/c"}}},
		{"a repair that failed keeps its entry", []prepare.IndexEntry{{ID: "file/c", Kind: "file", RecordKind: "File", Name: "c"}},
			nil, stack.Resources},
		{"a resource and its directory", []prepare.IndexEntry{
			{ID: "directory/d", Kind: "directory", RecordKind: "Directory", Name: "d"},
			{ID: "file/a", Kind: "file", RecordKind: "File", Name: "a"}},
			map[string]Converged{"directory/d": {ID: "/d"}, "file/a": {ID: "/a"}}, stack.Resources},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resources, hash, _ := StackRecord(stack, StackRun{Steps: tt.steps, Converged: tt.converged, SnapshotHash: "h", Partial: true})
			assert.Equal(t, tt.want, resources)
			assert.Equal(t, "h", hash)
		})
	}
	resources, _, _ := StackRecord(stack, StackRun{Steps: tests[0].steps, Converged: tests[0].converged, SnapshotHash: "h"})
	assert.Len(t, resources, 1, "a whole run records only what it ran")
}
