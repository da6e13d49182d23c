package providers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestListByPlatformID keeps only the objects of the ids asked for, each
// listed with its platform id; ids no object has are left out.
func TestListByPlatformID(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		f := newHTTPFixture(t)
		var ids []string
		for _, n := range []string{"b1", "b2"} {
			id, err := f.plat.Create("buckets", map[string]any{"name": n})
			require.NoError(t, err)
			ids = append(ids, id)
		}
		spec := f.spec("buckets", map[string]any{"name": ""})
		spec["headers"] = map[string]any{"Authorization": "Bearer secret"}
		listed, err := f.reg.List(context.Background(), "http", Node{}, ListQuery{Spec: spec, IDs: []string{ids[1], "missing"}})
		require.NoError(t, err)
		require.Len(t, listed, 1, "%+v", listed)
		assert.Equal(t, "b2", listed[0].Name)
		assert.Equal(t, ids[1], listed[0].ID)
		assert.Equal(t, ids[1], listed[0].Spec["id"], "the spec names the object")
	})
	t.Run("external without ids: by name", func(t *testing.T) {
		f := newExtFixture(t, ExternalOptions{})
		for _, n := range []string{"a", "b"} {
			f.converge(t, Request{Name: n, Spec: f.jsonfile(n, map[string]any{"name": n})})
		}
		listed, err := f.reg.List(context.Background(), "external", Node{}, ListQuery{Spec: f.jsonfile("any", map[string]any{}), IDs: []string{"b"}})
		require.NoError(t, err)
		require.Len(t, listed, 1, "%+v", listed)
		assert.Equal(t, "b", listed[0].ID)
	})
}

// TestListByPlatformLabel keeps the http objects linked to a label, by
// the label's id or its name, each with its links; listing by label
// without links is refused.
func TestListByPlatformLabel(t *testing.T) {
	f := newHTTPFixture(t)
	l1, err := f.plat.Create("labels", map[string]any{"name": "l1"})
	require.NoError(t, err)
	l2, err := f.plat.Create("labels", map[string]any{"name": "l2"})
	require.NoError(t, err)
	b1, err := f.plat.Create("buckets", map[string]any{"name": "b1"})
	require.NoError(t, err)
	b2, err := f.plat.Create("buckets", map[string]any{"name": "b2"})
	require.NoError(t, err)
	require.NoError(t, f.plat.Map("buckets", b1, l1))
	require.NoError(t, f.plat.Map("buckets", b1, l2))
	require.NoError(t, f.plat.Map("buckets", b2, l2))
	spec := f.spec("buckets", map[string]any{"name": ""})
	spec["headers"] = map[string]any{"Authorization": "Bearer secret"}
	spec["links"] = map[string]any{"path": "/labels", "field": "labelID", "ids": []any{}}
	listed, err := f.reg.List(context.Background(), "http", Node{}, ListQuery{Spec: spec, Labels: []string{l1}})
	require.NoError(t, err)
	require.Len(t, listed, 1, "%+v", listed)
	assert.Equal(t, b1, listed[0].ID)
	assert.ElementsMatch(t, []string{l1, l2}, listed[0].Labels)
	assert.Equal(t, []string{"l1", "l2"}, listed[0].LabelNames, "the names the platform gives its labels")
	for _, tt := range []struct {
		name   string
		labels []string
		want   []string
	}{
		{name: "a label's name", labels: []string{"l1"}, want: []string{b1}},
		{name: "a name shared by both", labels: []string{"l2"}, want: []string{b1, b2}},
		{name: "an id and a name", labels: []string{l1, "l2"}, want: []string{b1, b2}},
		{name: "a name no label has", labels: []string{"l3"}},
	} {
		t.Run("by "+tt.name, func(t *testing.T) {
			got, err := f.reg.List(context.Background(), "http", Node{}, ListQuery{Spec: spec, Labels: tt.labels})
			require.NoError(t, err)
			var ids []string
			for _, l := range got {
				ids = append(ids, l.ID)
			}
			assert.ElementsMatch(t, tt.want, ids)
		})
	}
	// The listed spec, links and all, adopts the object: converging is a noop.
	ch := f.converge(t, Request{Name: listed[0].Name, Spec: listed[0].Spec})
	assert.Equal(t, model.ActionNoop, ch.Action, "%+v", ch.Changes)

	delete(spec, "links")
	_, err = f.reg.List(context.Background(), "http", Node{}, ListQuery{Spec: spec, Labels: []string{l1}})
	require.Error(t, err)
	assert.True(t, IsConfigError(err), "%v", err)
	assert.Contains(t, err.Error(), "needs the spec's links")
}
