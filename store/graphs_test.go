package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func boolPtr(b bool) *bool { return &b }

// fuelGraph is a graph with every kind of task field: typed ones, fields
// Cairn does not interpret (Extra), explicit nulls for a layer merge, and
// where each task came from.
func fuelGraph() *model.Graph {
	return &model.Graph{
		Name: "Detach DB",
		Type: "detach-db",
		Tasks: []*model.Task{
			{
				ID: "stop-db", Type: "shell", Version: "2.1.0", Roles: []string{"controller"},
				Requires:     []string{"pre_deployment_end"},
				RequiredFor:  []string{"move-db"},
				CrossDepends: []model.CrossDep{{Name: "/^backup-.*/", Role: []any{"controller", "mongo"}, Policy: "any"}},
				Condition:    `settings:nodes.count > 1`,
				FailOnError:  boolPtr(false),
				Strategy:     &model.Strategy{Type: "parallel", Amount: 2},
				Parameters: map[string]any{
					"cmd":     "systemctl stop mysql",
					"timeout": int64(180),
					"ratio":   0.5,
					"nested":  map[string]any{"list": []any{int64(1), "two", nil, true}},
				},
				Meta: model.Meta{Retry: 3, Delay: "5s"},
				Extra: map[string]any{
					"test_pre":     map[string]any{"cmd": "pgrep mysqld"},
					"reexecute_on": []any{"deploy_changes"},
					"big":          int64(9007199254740993), // beyond float64 precision
				},
				Nulls: []string{"groups", "condition"},
				Layer: model.LayerCluster,
				Owner: "env-1",
				Pos:   model.Position{Source: "detach.yaml", Line: 3, Column: 3},
			},
			{ID: "move-db", Type: "puppet", Groups: []string{"primary-controller"}},
			{ID: "all", Type: model.TaskGroup, Tasks: []string{"stop-db", "move-db"}, FaultTolerance: "30%"},
		},
	}
}

func TestGraphRoundTripKeepsEveryField(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		must(t, s.PutCluster(ctx, &model.Cluster{ID: "env-1", Name: "env-1"}))
		source := []byte("# kept verbatim, comments and all\ntype: detach-db\ntasks:\n  - id: stop-db\n")
		in := &model.StoredGraph{Layer: model.LayerCluster, OwnerID: "env-1", Name: "Detach DB",
			Source: source, ContentType: "application/yaml", Graph: fuelGraph()}
		must(t, s.PutGraph(ctx, in))
		require.Equal(t, "detach-db", in.Type, "PutGraph filled type %q, updatedAt %v", in.Type, in.UpdatedAt)
		require.False(t, in.UpdatedAt.IsZero(), "PutGraph filled type %q, updatedAt %v", in.Type, in.UpdatedAt)
		got, err := s.GetGraph(ctx, model.LayerCluster, "env-1", "detach-db")
		must(t, err)
		want := *in
		want.Graph = fuelGraph()
		for i := range want.Graph.Tasks {
			require.Equal(t, want.Graph.Tasks[i], got.Graph.Tasks[i], "task %d differs after the round trip:\n got %#v\nwant %#v", i, got.Graph.Tasks[i], want.Graph.Tasks[i])
		}
		require.Equal(t, &want, got, "stored graph differs after the round trip:\n got %+v\nwant %+v", got, &want)
		require.Equal(t, string(source), string(got.Source), "source %q, want it verbatim", got.Source)
	})
}

func TestGraphs(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		s := openTest(t, dbURL)
		must(t, s.PutRelease(ctx, &model.Release{ID: "rel", Name: "rel"}))
		must(t, s.PutPlugin(ctx, &model.Plugin{ID: "plug", Name: "plug"}))
		must(t, s.PutCluster(ctx, &model.Cluster{ID: "env", Name: "env", ReleaseID: "rel", PluginIDs: []string{"plug"}}))
		// An owner id shared by two layers must not mix their graphs.
		must(t, s.PutPlugin(ctx, &model.Plugin{ID: "rel", Name: "plugin named like the release"}))

		put := func(layer model.Layer, owner, typ string, tasks ...string) *model.StoredGraph {
			t.Helper()
			g := &model.Graph{Type: typ}
			for _, id := range tasks {
				g.Tasks = append(g.Tasks, &model.Task{ID: id, Type: "shell"})
			}
			sg := &model.StoredGraph{Layer: layer, OwnerID: owner, Type: typ, Source: []byte(strings.Join(tasks, ",")), Graph: g}
			must(t, s.PutGraph(ctx, sg))
			return sg
		}
		taskIDs := func(g *model.StoredGraph) string {
			var ids []string
			for _, tk := range g.Graph.Tasks {
				ids = append(ids, tk.ID)
			}
			return strings.Join(ids, ",")
		}

		put(model.LayerRelease, "rel", "default", "a", "b", "c")
		put(model.LayerRelease, "rel", "upgrade", "u")
		put(model.LayerPlugin, "rel", "default", "from-plugin")
		put(model.LayerCluster, "env", "default", "x")
		put(model.LayerPlugin, "plug", "default", "p")

		// Put replaces the owner's graph of that type whole.
		time.Sleep(2 * time.Millisecond)
		first, err := s.GetGraph(ctx, model.LayerRelease, "rel", "default")
		must(t, err)
		put(model.LayerRelease, "rel", "default", "d")
		got, err := s.GetGraph(ctx, model.LayerRelease, "rel", "default")
		must(t, err)
		require.Equal(t, "d", taskIDs(got), "replaced graph: tasks %s, source %q, updatedAt %v (was %v)", taskIDs(got), got.Source, got.UpdatedAt, first.UpdatedAt)
		require.Equal(t, "d", string(got.Source), "replaced graph: tasks %s, source %q, updatedAt %v (was %v)", taskIDs(got), got.Source, got.UpdatedAt, first.UpdatedAt)
		require.True(t, got.UpdatedAt.After(first.UpdatedAt), "replaced graph: tasks %s, source %q, updatedAt %v (was %v)", taskIDs(got), got.Source, got.UpdatedAt, first.UpdatedAt)

		list, err := s.ListGraphs(ctx, model.LayerRelease, "rel")
		must(t, err)
		require.Len(t, list, 2, "ListGraphs(release rel)")
		require.Equal(t, "default", list[0].Type, "ListGraphs(release rel) = %+v", list)
		require.Equal(t, "upgrade", list[1].Type, "ListGraphs(release rel) = %+v", list)
		require.Equal(t, "u", taskIDs(list[1]), "ListGraphs(release rel) = %+v", list)
		pl, err := s.ListGraphs(ctx, model.LayerPlugin, "rel")
		must(t, err)
		require.Len(t, pl, 1, "ListGraphs(plugin rel)")
		require.Equal(t, "from-plugin", taskIDs(pl[0]), "ListGraphs(plugin rel) = %+v", pl)
		none, err := s.ListGraphs(ctx, model.LayerCluster, "nobody")
		must(t, err)
		require.NotNil(t, none, "ListGraphs of an unknown owner = %#v, want empty", none)
		require.Empty(t, none, "ListGraphs of an unknown owner = %#v, want empty", none)

		// Type defaults to "default" on put, get and delete.
		untyped := &model.StoredGraph{Layer: model.LayerCluster, OwnerID: "env", Graph: &model.Graph{Tasks: []*model.Task{{ID: "y", Type: "shell"}}}}
		must(t, s.PutGraph(ctx, untyped))
		require.Equal(t, model.DefaultGraphType, untyped.Type, "untyped graph stored as")
		got, err = s.GetGraph(ctx, model.LayerCluster, "env", "")
		must(t, err)
		require.Equal(t, "y", taskIDs(got), "GetGraph(default) = %+v", got)
		require.NotNil(t, got.Source, "GetGraph(default) = %+v", got)

		// Errors.
		wantErr(t, s.PutGraph(ctx, &model.StoredGraph{Layer: model.LayerCluster, OwnerID: "ghost", Type: "default"}), ErrNotFound, "cluster", "ghost")
		err = s.PutGraph(ctx, &model.StoredGraph{Layer: "environment", OwnerID: "env"})
		require.Error(t, err, "unknown layer")
		require.Contains(t, err.Error(), `unknown graph layer "environment"`, "unknown layer: %v", err)
		_, err = s.GetGraph(ctx, model.LayerCluster, "env", "nope")
		wantErr(t, err, ErrNotFound, "nope", "env")
		wantErr(t, s.DeleteGraph(ctx, model.LayerCluster, "env", "nope"), ErrNotFound, "nope")

		must(t, s.DeleteGraph(ctx, model.LayerRelease, "rel", "upgrade"))
		_, err = s.GetGraph(ctx, model.LayerRelease, "rel", "upgrade")
		wantErr(t, err, ErrNotFound)

		// Deleting an owner deletes its graphs, and only its graphs.
		graphCount := func(layer model.Layer, owner string) int {
			var n int
			must(t, be.raw(t, dbURL).QueryRow(`SELECT count(*) FROM graphs WHERE layer = $1 AND owner_id = $2`, string(layer), owner).Scan(&n))
			return n
		}
		must(t, s.DeleteCluster(ctx, "env"))
		n := graphCount(model.LayerCluster, "env")
		require.Equal(t, 0, n, "%d graphs outlived cluster env", n)
		must(t, s.DeletePlugin(ctx, "plug"))
		n = graphCount(model.LayerPlugin, "plug")
		require.Equal(t, 0, n, "%d graphs outlived plugin plug", n)
		must(t, s.DeleteRelease(ctx, "rel"))
		n = graphCount(model.LayerRelease, "rel")
		require.Equal(t, 0, n, "%d graphs outlived release rel", n)
		n = graphCount(model.LayerPlugin, "rel")
		require.Equal(t, 1, n, "deleting release rel took %d graphs of plugin rel with it", 1-n)
	})
}

func TestGraphCodecRejectsShadowingExtra(t *testing.T) {
	tests := []string{"requires", "id", taskMetaKey}
	for _, key := range tests {
		t.Run(key, func(t *testing.T) {
			g := &model.Graph{Type: "default", Tasks: []*model.Task{{ID: "t", Type: "shell", Extra: map[string]any{key: "x"}}}}
			_, err := encodeGraph(g)
			require.Error(t, err, "encodeGraph with extra %q: %v", key, err)
			require.Contains(t, err.Error(), key, "encodeGraph with extra %q: %v", key, err)
		})
	}
}

func TestGraphCodecNil(t *testing.T) {
	b, err := encodeGraph(nil)
	must(t, err)
	g, err := decodeGraph(b)
	must(t, err)
	require.Nil(t, g, "nil graph came back as")
	_, err = encodeGraph(&model.Graph{Tasks: []*model.Task{nil}})
	require.Error(t, err, "nil task accepted")
}
