package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestReleasesPluginsClustersCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t))

		// Create.
		var rel model.Release
		r := s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r1", "name": "Release one"}).expect(t, http.StatusCreated)
		r.json(t, &rel)
		require.Equal(t, "r1", rel.ID, "release %+v", rel)
		require.Equal(t, "Release one", rel.Name, "release %+v", rel)
		require.False(t, rel.CreatedAt.IsZero(), "release %+v", rel)
		loc := r.Header.Get("Location")
		require.Equal(t, "/v1/releases/r1", loc, "Location")
		var gen model.Release
		s.do(http.MethodPost, "/v1/releases", map[string]any{"name": "generated"}).expect(t, http.StatusCreated).json(t, &gen)
		require.NotEmpty(t, gen.ID, "generated id")
		require.True(t, validID(gen.ID), "generated id %q", gen.ID)
		s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r1", "name": "again"}).expect(t, http.StatusConflict)
		s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p1", "name": "Plugin one", "version": "1.0"}).expect(t, http.StatusCreated)
		s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p2", "name": "Plugin two"}).expect(t, http.StatusCreated)

		var cl model.Cluster
		s.do(http.MethodPost, "/v1/clusters", map[string]any{
			"id": "c1", "name": "Cluster one", "releaseId": "r1", "pluginIds": []string{"p2", "p1"},
			"nodes": []map[string]any{{"id": "n1", "name": "node-1", "roles": []string{"web"}, "mode": "local"}, {"name": "node-2"}},
		}).expect(t, http.StatusCreated).json(t, &cl)
		require.Equal(t, "r1", cl.ReleaseID, "cluster %+v", cl)
		require.Equal(t, "p2,p1", strings.Join(cl.PluginIDs, ","), "cluster %+v", cl)
		require.Len(t, cl.Nodes, 2, "cluster %+v", cl)
		require.Equal(t, "node-2", cl.Nodes[1].ID, "cluster %+v", cl)

		// Read back.
		var got model.Cluster
		s.do(http.MethodGet, "/v1/clusters/c1", nil).expect(t, http.StatusOK).json(t, &got)
		require.Equal(t, "Cluster one", got.Name, "got %+v", got)
		require.Equal(t, "p2,p1", strings.Join(got.PluginIDs, ","), "got %+v", got)
		require.Equal(t, "web", got.Nodes[0].Roles[0], "got %+v", got)
		var list struct {
			Releases []model.Release `json:"releases"`
		}
		s.do(http.MethodGet, "/v1/releases", nil).expect(t, http.StatusOK).json(t, &list)
		require.Len(t, list.Releases, 2, "releases %+v", list)
		var plugins struct {
			Plugins []model.Plugin `json:"plugins"`
		}
		s.do(http.MethodGet, "/v1/plugins", nil).expect(t, http.StatusOK).json(t, &plugins)
		require.Len(t, plugins.Plugins, 2, "plugins %+v", plugins)
		require.Equal(t, "1.0", plugins.Plugins[0].Version, "plugins %+v", plugins)
		var clusters struct {
			Clusters []model.Cluster `json:"clusters"`
		}
		s.do(http.MethodGet, "/v1/clusters", nil).expect(t, http.StatusOK).json(t, &clusters)
		require.Len(t, clusters.Clusters, 1, "clusters %+v", clusters)
		require.Len(t, clusters.Clusters[0].Nodes, 2, "clusters %+v", clusters)

		// Update.
		var upd model.Cluster
		s.do(http.MethodPut, "/v1/clusters/c1", map[string]any{"name": "renamed", "pluginIds": []string{"p1"},
			"nodes": []map[string]any{{"id": "n1", "roles": []string{"db"}}}}).expect(t, http.StatusOK).json(t, &upd)
		require.Equal(t, "renamed", upd.Name, "updated %+v", upd)
		require.Empty(t, upd.ReleaseID, "updated %+v", upd)
		require.Len(t, upd.Nodes, 1, "updated %+v", upd)
		require.Equal(t, "db", upd.Nodes[0].Roles[0], "updated %+v", upd)
		require.True(t, upd.CreatedAt.Equal(cl.CreatedAt), "update moved createdAt: %v vs %v", upd.CreatedAt, cl.CreatedAt)
		s.do(http.MethodPut, "/v1/releases/r1", map[string]any{"name": "new name", "description": "d"}).expect(t, http.StatusOK)
		s.do(http.MethodPut, "/v1/releases/missing", map[string]any{"name": "x"}).expect(t, http.StatusNotFound)
		s.do(http.MethodPut, "/v1/releases/r1", map[string]any{"id": "other", "name": "x"}).expect(t, http.StatusUnprocessableEntity)

		// Delete: in use → 409, then 204, then 404.
		s.do(http.MethodDelete, "/v1/plugins/p1", nil).expect(t, http.StatusConflict)
		s.do(http.MethodDelete, "/v1/clusters/c1", nil).expect(t, http.StatusNoContent)
		s.do(http.MethodDelete, "/v1/clusters/c1", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodDelete, "/v1/plugins/p1", nil).expect(t, http.StatusNoContent)
		s.do(http.MethodGet, "/v1/plugins/p1", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodDelete, "/v1/releases/r1", nil).expect(t, http.StatusNoContent)
	})
}

func TestOwnerBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t))
		s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p1", "name": "p"}).expect(t, http.StatusCreated)
		tests := []struct {
			name   string
			path   string
			body   any
			ctype  string
			status int
			paths  []string // detail paths expected
			line   int      // line of the first detail, when positioned
		}{
			{"malformed JSON", "/v1/releases", "{\n  \"name\": \"x\",\n  oops\n}", "application/json", 400, nil, 3},
			{"unknown field", "/v1/releases", `{"name": "x", "colour": "red"}`, "application/json", 400, []string{"colour"}, 1},
			{"wrong type", "/v1/releases", "{\"name\": 5}", "application/json", 400, []string{"name"}, 1},
			{"trailing data", "/v1/releases", `{"name": "x"} {}`, "application/json", 400, nil, 1},
			{"empty body", "/v1/releases", "", "application/json", 400, nil, 0},
			{"not JSON content type", "/v1/releases", "name: x", "application/yaml", 415, nil, 0},
			{"missing name", "/v1/releases", map[string]any{"id": "r"}, "", 422, []string{"name"}, 0},
			{"bad id", "/v1/releases", map[string]any{"id": "a/b", "name": "x"}, "", 422, []string{"id"}, 0},
			{"cluster: every problem at once", "/v1/clusters", map[string]any{
				"name": "c", "releaseId": "nope", "pluginIds": []string{"p1", "p1", "ghost"},
				"nodes": []map[string]any{{"id": "a"}, {"id": "a"}, {"roles": []string{"x"}}, {"id": "b", "mode": "remote"}, {"name": "master"}},
			}, "", 422, []string{"releaseId", "pluginIds[1]", "pluginIds[2]", "nodes[1].id", "nodes[2]", "nodes[3].mode", "nodes[4]"}, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var r *response
				if tt.ctype != "" {
					r = s.do(http.MethodPost, tt.path, tt.body, "Content-Type", tt.ctype)
				} else {
					r = s.do(http.MethodPost, tt.path, tt.body)
				}
				info := r.expect(t, tt.status).errorBody(t)
				for _, p := range tt.paths {
					found := false
					for _, d := range info.Details {
						found = found || d.Path == p
					}
					assert.True(t, found, "no detail at %q: %+v", p, info.Details)
				}
				if tt.line > 0 {
					require.NotEmpty(t, info.Details, "want line %d with a column: %+v", tt.line, info.Details)
					require.Equal(t, tt.line, info.Details[0].Line, "want line %d with a column: %+v", tt.line, info.Details)
					assert.NotEqual(t, 0, info.Details[0].Column, "want line %d with a column: %+v", tt.line, info.Details)
				}
			})
		}
		ctx := context.Background()
		rs, _ := s.Store.ListReleases(ctx)
		require.Empty(t, rs, "releases stored from bad input")
		cs, _ := s.Store.ListClusters(ctx)
		require.Empty(t, cs, "clusters stored from bad input")
	})
}
