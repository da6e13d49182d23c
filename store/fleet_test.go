package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestReleases(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)

		r := &model.Release{Name: "2026.1", Description: "first"}
		must(t, s.PutRelease(ctx, r))
		require.Len(t, r.ID, 16, "PutRelease filled %+v", r)
		require.False(t, r.CreatedAt.IsZero(), "PutRelease filled %+v", r)
		require.True(t, r.CreatedAt.Equal(r.UpdatedAt), "PutRelease filled %+v", r)
		got, err := s.GetRelease(ctx, r.ID)
		must(t, err)
		require.Equal(t, r, got, "GetRelease")

		time.Sleep(2 * time.Millisecond)
		update := &model.Release{ID: r.ID, Name: "2026.1", Description: "updated"}
		must(t, s.PutRelease(ctx, update))
		require.True(t, update.CreatedAt.Equal(r.CreatedAt), "update: CreatedAt %v (was %v), UpdatedAt %v (was %v)", update.CreatedAt, r.CreatedAt, update.UpdatedAt, r.UpdatedAt)
		require.True(t, update.UpdatedAt.After(r.UpdatedAt), "update: CreatedAt %v (was %v), UpdatedAt %v (was %v)", update.CreatedAt, r.CreatedAt, update.UpdatedAt, r.UpdatedAt)
		got, err = s.GetRelease(ctx, r.ID)
		must(t, err)
		require.Equal(t, update, got, "GetRelease after update")

		second := &model.Release{ID: "r2", Name: "2026.2"}
		must(t, s.PutRelease(ctx, second))
		list, err := s.ListReleases(ctx)
		must(t, err)
		require.Len(t, list, 2, "ListReleases")
		require.Equal(t, r.ID, list[0].ID, "ListReleases = %+v", list)
		require.Equal(t, "r2", list[1].ID, "ListReleases = %+v", list)

		must(t, s.DeleteRelease(ctx, r.ID))
		_, err = s.GetRelease(ctx, r.ID)
		wantErr(t, err, ErrNotFound, "release", r.ID)
		wantErr(t, s.DeleteRelease(ctx, r.ID), ErrNotFound, r.ID)
	})
}

func TestPlugins(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)

		p := &model.Plugin{ID: "detach-db", Name: "detach-db", Version: "1.0.0", Description: "moves the DB"}
		must(t, s.PutPlugin(ctx, p))
		got, err := s.GetPlugin(ctx, p.ID)
		must(t, err)
		require.Equal(t, p, got, "GetPlugin")
		time.Sleep(2 * time.Millisecond)
		p2 := &model.Plugin{ID: p.ID, Name: "detach-db", Version: "1.1.0"}
		must(t, s.PutPlugin(ctx, p2))
		got, err = s.GetPlugin(ctx, p.ID)
		must(t, err)
		require.Equal(t, "1.1.0", got.Version, "GetPlugin after update = %+v", got)
		require.Empty(t, got.Description, "GetPlugin after update = %+v", got)
		require.True(t, got.CreatedAt.Equal(p.CreatedAt), "GetPlugin after update = %+v", got)
		require.True(t, got.UpdatedAt.After(p.UpdatedAt), "GetPlugin after update = %+v", got)
		list, err := s.ListPlugins(ctx)
		must(t, err)
		require.Len(t, list, 1, "ListPlugins")
		require.Equal(t, got, list[0], "ListPlugins = %+v", list)
		must(t, s.DeletePlugin(ctx, p.ID))
		_, err = s.GetPlugin(ctx, p.ID)
		wantErr(t, err, ErrNotFound, "plugin", p.ID)
		wantErr(t, s.DeletePlugin(ctx, p.ID), ErrNotFound, p.ID)
	})
}

func TestClusters(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		s := openTest(t, dbURL)
		must(t, s.PutRelease(ctx, &model.Release{ID: "rel", Name: "rel"}))
		for _, id := range []string{"p1", "p2", "p3"} {
			must(t, s.PutPlugin(ctx, &model.Plugin{ID: id, Name: id}))
		}

		c := &model.Cluster{
			Name:      "env-1",
			ReleaseID: "rel",
			PluginIDs: []string{"p2", "p1"},
			Nodes: []model.Node{
				{ID: "n1", Name: "node-1", Roles: []string{"controller", "mongo"}, Mode: model.NodeLocal},
				{ID: "n2", Name: "node-2", Roles: []string{"compute"}, Mode: model.NodeAgent},
				{Name: "node-3"}, // id defaults to the name; nil roles stay nil
			},
		}
		must(t, s.PutCluster(ctx, c))
		require.NotEmpty(t, c.ID, "PutCluster filled %+v", c)
		require.Equal(t, "node-3", c.Nodes[2].ID, "PutCluster filled %+v", c)
		require.False(t, c.CreatedAt.IsZero(), "PutCluster filled %+v", c)
		got, err := s.GetCluster(ctx, c.ID)
		must(t, err)
		require.Equal(t, c, got, "GetCluster = %+v\nwant %+v", got, c)

		// Put replaces nodes and plugin order whole.
		time.Sleep(2 * time.Millisecond)
		c2 := &model.Cluster{
			ID:        c.ID,
			Name:      "env-1 renamed",
			PluginIDs: []string{"p3", "p2", "p1"},
			Nodes:     []model.Node{{ID: "n2", Name: "node-2", Roles: []string{"compute", "cinder"}}},
		}
		must(t, s.PutCluster(ctx, c2))
		got, err = s.GetCluster(ctx, c.ID)
		must(t, err)
		require.Equal(t, c2, got, "GetCluster after replace = %+v\nwant %+v", got, c2)
		require.True(t, got.CreatedAt.Equal(c.CreatedAt), "replace: %+v (first put %+v)", got, c)
		require.True(t, got.UpdatedAt.After(c.UpdatedAt), "replace: %+v (first put %+v)", got, c)
		require.Empty(t, got.ReleaseID, "replace: %+v (first put %+v)", got, c)

		// A cluster with neither nodes nor plugins.
		bare := &model.Cluster{ID: "bare", Name: "bare"}
		must(t, s.PutCluster(ctx, bare))
		got, err = s.GetCluster(ctx, "bare")
		must(t, err)
		require.NotNil(t, got.Nodes, "bare cluster = %+v, want empty nodes and no plugins", got)
		require.Empty(t, got.Nodes, "bare cluster = %+v, want empty nodes and no plugins", got)
		require.Nil(t, got.PluginIDs, "bare cluster = %+v, want empty nodes and no plugins", got)

		list, err := s.ListClusters(ctx)
		must(t, err)
		require.Len(t, list, 2, "ListClusters")
		require.Equal(t, c2, list[0], "ListClusters = %+v", list)
		require.Equal(t, "bare", list[1].ID, "ListClusters = %+v", list)

		must(t, s.DeleteCluster(ctx, c.ID))
		_, err = s.GetCluster(ctx, c.ID)
		wantErr(t, err, ErrNotFound, "cluster", c.ID)
		wantErr(t, s.DeleteCluster(ctx, c.ID), ErrNotFound, c.ID)
		// Its nodes and plugin attachments went with it.
		raw := be.raw(t, dbURL)
		for _, table := range []string{"nodes", "cluster_plugins"} {
			var n int
			must(t, raw.QueryRow(`SELECT count(*) FROM `+table+` WHERE cluster_id = $1`, c.ID).Scan(&n))
			require.Equal(t, 0, n, "%d rows of %s outlived their cluster", n, table)
		}
	})
}

func TestClusterReferences(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		must(t, s.PutRelease(ctx, &model.Release{ID: "rel", Name: "rel"}))
		must(t, s.PutPlugin(ctx, &model.Plugin{ID: "plug", Name: "plug"}))

		tests := []struct {
			name    string
			cluster model.Cluster
			target  error
			parts   []string
		}{
			{"unknown release", model.Cluster{ID: "c", ReleaseID: "nope"}, ErrNotFound, []string{"release", "nope"}},
			{"unknown plugin", model.Cluster{ID: "c", PluginIDs: []string{"plug", "ghost"}}, ErrNotFound, []string{"plugin", "ghost"}},
			{"plugin twice", model.Cluster{ID: "c", PluginIDs: []string{"plug", "plug"}}, ErrConflict, []string{"plug", "twice"}},
			{"node id twice", model.Cluster{ID: "c", Nodes: []model.Node{{ID: "n", Name: "a"}, {ID: "n", Name: "b"}}}, ErrConflict, []string{`"n"`, "twice"}},
			{"node name twice", model.Cluster{ID: "c", Nodes: []model.Node{{ID: "1", Name: "a"}, {ID: "2", Name: "a"}}}, ErrConflict, []string{`"a"`, "twice"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := tt.cluster
				wantErr(t, s.PutCluster(ctx, &c), tt.target, tt.parts...)
				_, err := s.GetCluster(ctx, "c")
				wantErr(t, err, ErrNotFound) // nothing was written
			})
		}

		must(t, s.PutCluster(ctx, &model.Cluster{ID: "c", ReleaseID: "rel", PluginIDs: []string{"plug"}}))
		wantErr(t, s.DeleteRelease(ctx, "rel"), ErrConflict, "rel", `cluster "c"`)
		wantErr(t, s.DeletePlugin(ctx, "plug"), ErrConflict, "plug", `cluster "c"`)
		// Detached, they can go.
		must(t, s.PutCluster(ctx, &model.Cluster{ID: "c"}))
		must(t, s.DeleteRelease(ctx, "rel"))
		must(t, s.DeletePlugin(ctx, "plug"))
	})
}
