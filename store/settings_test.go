package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// fuelStores are the stores the Fuel fields are checked on: each backend,
// plain and sealed.
func fuelStores(t *testing.T, be testBackend) map[string]Store {
	plain := freshStore(t, be)
	sealed, err := WithSealer(freshStore(t, be), []byte("a sealing key of 32 bytes, or so"))
	require.NoError(t, err)
	return map[string]Store{"plain": plain, "sealed": sealed}
}

func TestReleaseVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		r := &model.Release{ID: "liberty", Name: "liberty", Version: "2015.1.0-8.0"}
		require.NoError(t, s.PutRelease(ctx, r))
		got, err := s.GetRelease(ctx, "liberty")
		require.NoError(t, err)
		assert.Equal(t, "2015.1.0-8.0", got.Version)

		r.Version = "2015.1.0-8.1"
		require.NoError(t, s.PutRelease(ctx, r))
		list, err := s.ListReleases(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, "2015.1.0-8.1", list[0].Version)
	})
}

func TestClusterSettingsAndAttributes(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		for name, s := range fuelStores(t, be) {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				settings := map[string]any{
					"master_ip":  "10.20.0.2",
					"public_ssl": map[string]any{"hostname": map[string]any{"value": "cloud.example.com"}},
					"access":     map[string]any{"password": "s3cret-admin-pw"},
				}
				c := &model.Cluster{ID: "env-1", Name: "env-1", Settings: settings, Nodes: []model.Node{
					{ID: "n1", Name: "n1", Roles: []string{"controller"}, Attributes: map[string]any{"fqdn": "n1.example.com", "weight": float64(2)}},
					{ID: "n2", Name: "n2", Roles: []string{"compute"}},
				}}
				require.NoError(t, s.PutCluster(ctx, c))
				assert.Equal(t, settings, c.Settings, "the caller's cluster keeps its settings in clear")

				got, err := s.GetCluster(ctx, "env-1")
				require.NoError(t, err)
				assert.Equal(t, settings, got.Settings)
				assert.Equal(t, map[string]any{"fqdn": "n1.example.com", "weight": float64(2)}, got.Nodes[0].Attributes)
				assert.Nil(t, got.Nodes[1].Attributes)

				list, err := s.ListClusters(ctx)
				require.NoError(t, err)
				require.Len(t, list, 1)
				assert.Equal(t, settings, list[0].Settings)

				// A save without settings keeps them (they have their own routes).
				c2 := &model.Cluster{ID: "env-1", Name: "renamed", Nodes: got.Nodes}
				require.NoError(t, s.PutCluster(ctx, c2))
				assert.Equal(t, settings, c2.Settings)
				got, err = s.GetCluster(ctx, "env-1")
				require.NoError(t, err)
				assert.Equal(t, "renamed", got.Name)
				assert.Equal(t, settings, got.Settings)

				// Update: read, change, write in one go.
				out, err := s.UpdateClusterSettings(ctx, "env-1", func(cur map[string]any) (map[string]any, error) {
					assert.Equal(t, settings, cur)
					return map[string]any{"master_ip": "10.20.0.3"}, nil
				})
				require.NoError(t, err)
				assert.Equal(t, map[string]any{"master_ip": "10.20.0.3"}, out)
				got, err = s.GetCluster(ctx, "env-1")
				require.NoError(t, err)
				assert.Equal(t, out, got.Settings)

				// fn's error comes back as it is, and nothing is written.
				boom := errors.New("boom")
				_, err = s.UpdateClusterSettings(ctx, "env-1", func(map[string]any) (map[string]any, error) { return nil, boom })
				assert.ErrorIs(t, err, boom)
				got, err = s.GetCluster(ctx, "env-1")
				require.NoError(t, err)
				assert.Equal(t, out, got.Settings)

				_, err = s.UpdateClusterSettings(ctx, "nope", func(m map[string]any) (map[string]any, error) { return m, nil })
				assert.ErrorIs(t, err, ErrNotFound)
			})
		}
	})
}

// TestClusterSettingsSealedAtRest reads the rows behind a sealed store:
// no settings value nor node attribute is kept in clear, and a sealed
// tree moved to another cluster does not open.
func TestClusterSettingsSealedAtRest(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		url := be.fresh(t)
		s, err := WithSealer(openTest(t, url), []byte("a sealing key of 32 bytes, or so"))
		require.NoError(t, err)
		for _, id := range []string{"a", "b"} {
			require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: id, Name: id,
				Settings: map[string]any{"access": map[string]any{"password": "s3cret-" + id}},
				Nodes:    []model.Node{{ID: "n1", Name: "n1", Roles: []string{}, Attributes: map[string]any{"token": "node-secret-" + id}}},
			}))
		}
		db := be.raw(t, url)
		var settings, attrs string
		require.NoError(t, db.QueryRow(`SELECT settings FROM clusters WHERE id = 'a'`).Scan(&settings))
		require.NoError(t, db.QueryRow(`SELECT attributes FROM nodes WHERE cluster_id = 'a'`).Scan(&attrs))
		for _, raw := range []string{settings, attrs} {
			assert.Contains(t, raw, SealedTreeKey)
			assert.NotContains(t, raw, "secret")
		}

		// Copy a's sealed settings onto b: they are bound to a.
		_, err = db.Exec(`UPDATE clusters SET settings = $1 WHERE id = 'b'`, settings)
		require.NoError(t, err)
		_, err = s.GetCluster(ctx, "b")
		require.ErrorIs(t, err, ErrUnsealable)

		// Without the key the store answers the sealed form, never clear text.
		plain := openTest(t, url)
		got, err := plain.GetCluster(ctx, "a")
		require.NoError(t, err)
		assert.Contains(t, got.Settings, SealedTreeKey)
	})
}

// TestUpdateClusterSettingsConcurrent runs patches side by side: each one
// reads what the one before wrote, so none is lost.
func TestUpdateClusterSettingsConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: "c", Name: "c", Nodes: []model.Node{}}))
		const n = 8
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := s.UpdateClusterSettings(ctx, "c", func(cur map[string]any) (map[string]any, error) {
					next := map[string]any{}
					for k, v := range cur {
						next[k] = v
					}
					next[strings.Repeat("k", i+1)] = true
					return next, nil
				})
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		got, err := s.GetCluster(ctx, "c")
		require.NoError(t, err)
		assert.Len(t, got.Settings, n)
	})
}

func TestListAllGraphs(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		require.NoError(t, s.PutRelease(ctx, &model.Release{ID: "r", Name: "r"}))
		require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: "c", Name: "c", ReleaseID: "r", Nodes: []model.Node{}}))
		put := func(layer model.Layer, owner, typ, name string) {
			require.NoError(t, s.PutGraph(ctx, &model.StoredGraph{Layer: layer, OwnerID: owner, Type: typ, Name: name,
				Source: []byte("[]"), Graph: &model.Graph{Type: typ, Name: name, Tasks: []*model.Task{}}}))
		}
		put(model.LayerRelease, "r", "default", "Release default")
		put(model.LayerRelease, "r", "upgrade", "")
		put(model.LayerCluster, "c", "default", "Cluster")

		all, err := s.ListAllGraphs(ctx, model.GraphFilter{})
		require.NoError(t, err)
		var keys []string
		for _, g := range all {
			keys = append(keys, string(g.Layer)+"/"+g.OwnerID+"/"+g.Type+"/"+g.Name)
			assert.False(t, g.UpdatedAt.IsZero())
		}
		assert.Equal(t, []string{"cluster/c/default/Cluster", "release/r/default/Release default", "release/r/upgrade/"}, keys)

		tests := []struct {
			name string
			f    model.GraphFilter
			want int
		}{
			{"by layer", model.GraphFilter{Layer: model.LayerRelease}, 2},
			{"by owner", model.GraphFilter{Layer: model.LayerCluster, OwnerID: "c"}, 1},
			{"by type", model.GraphFilter{Type: "default"}, 2},
			{"all three", model.GraphFilter{Layer: model.LayerRelease, OwnerID: "r", Type: "upgrade"}, 1},
			{"nothing", model.GraphFilter{OwnerID: "nope"}, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.ListAllGraphs(ctx, tt.f)
				require.NoError(t, err)
				assert.Len(t, got, tt.want)
			})
		}
	})
}
