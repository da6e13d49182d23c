package providers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
