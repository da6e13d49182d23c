package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestClusterSettingsRoutes(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t), withToken("tok"))
		s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "liberty", "name": "liberty", "version": "2015.1.0-8.0"}).expect(t, http.StatusCreated)
		var rel model.Release
		s.do(http.MethodGet, "/v1/releases/liberty", nil).expect(t, http.StatusOK).json(t, &rel)
		assert.Equal(t, "2015.1.0-8.0", rel.Version)

		s.do(http.MethodPost, "/v1/clusters", map[string]any{
			"id": "env", "name": "env", "releaseId": "liberty",
			"settings": map[string]any{"master_ip": "10.20.0.2"},
			"nodes":    []map[string]any{{"id": "n1", "roles": []string{"controller"}, "attributes": map[string]any{"fqdn": "n1.local"}}},
		}).expect(t, http.StatusCreated)

		settings := func() map[string]any {
			var doc model.SettingsDocument
			s.do(http.MethodGet, "/v1/clusters/env/settings", nil).expect(t, http.StatusOK).json(t, &doc)
			return doc.Settings
		}
		assert.Equal(t, map[string]any{"master_ip": "10.20.0.2"}, settings())
		var cl model.Cluster
		s.do(http.MethodGet, "/v1/clusters/env", nil).expect(t, http.StatusOK).json(t, &cl)
		assert.Equal(t, map[string]any{"fqdn": "n1.local"}, cl.Nodes[0].Attributes)

		// PUT replaces whole.
		s.do(http.MethodPut, "/v1/clusters/env/settings", map[string]any{"settings": map[string]any{
			"public_ssl": map[string]any{"hostname": "cloud.example.com", "horizon": true},
			"access":     map[string]any{"user": "admin", "password": "x"},
		}}).expect(t, http.StatusOK)
		assert.Equal(t, map[string]any{
			"public_ssl": map[string]any{"hostname": "cloud.example.com", "horizon": true},
			"access":     map[string]any{"user": "admin", "password": "x"},
		}, settings())

		// PATCH merges (RFC 7386): objects merge, null removes, the rest replaces.
		var patched model.SettingsDocument
		s.do(http.MethodPatch, "/v1/clusters/env/settings", map[string]any{
			"public_ssl": map[string]any{"horizon": nil, "hostname": "new.example.com"},
			"access":     nil,
			"master_ip":  "10.20.0.3",
		}).expect(t, http.StatusOK).json(t, &patched)
		want := map[string]any{"public_ssl": map[string]any{"hostname": "new.example.com"}, "master_ip": "10.20.0.3"}
		assert.Equal(t, want, patched.Settings)
		assert.Equal(t, want, settings())

		// A cluster update without settings keeps them.
		s.do(http.MethodPut, "/v1/clusters/env", map[string]any{"name": "env", "releaseId": "liberty",
			"nodes": []map[string]any{{"id": "n1", "roles": []string{"controller"}}}}).expect(t, http.StatusOK)
		assert.Equal(t, want, settings())

		// Merge-patch media type.
		s.do(http.MethodPatch, "/v1/clusters/env/settings", []byte(`{"extra": 1}`), "Content-Type", "application/merge-patch+json").expect(t, http.StatusOK)
		assert.Equal(t, float64(1), settings()["extra"])
	})
}

func TestClusterSettingsBadInput(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withToken("tok"))
	s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "env", "name": "env"}).expect(t, http.StatusCreated)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		detail string
	}{
		{"unknown cluster", http.MethodGet, "/v1/clusters/nope/settings", nil, http.StatusNotFound, ""},
		{"patch unknown cluster", http.MethodPatch, "/v1/clusters/nope/settings", map[string]any{"a": 1}, http.StatusNotFound, ""},
		{"put without settings", http.MethodPut, "/v1/clusters/env/settings", map[string]any{}, http.StatusUnprocessableEntity, "settings"},
		{"put unknown field", http.MethodPut, "/v1/clusters/env/settings", map[string]any{"settings": map[string]any{}, "x": 1}, http.StatusBadRequest, ""},
		{"reserved key", http.MethodPatch, "/v1/clusters/env/settings", map[string]any{"a": map[string]any{"$cairnSealed": "x"}}, http.StatusUnprocessableEntity, "a.$cairnSealed"},
		{"patch not an object", http.MethodPatch, "/v1/clusters/env/settings", []byte(`[1]`), http.StatusBadRequest, ""},
		{"malformed json", http.MethodPatch, "/v1/clusters/env/settings", []byte(`{"a": `), http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if _, raw := tt.body.([]byte); raw {
				headers = []string{"Content-Type", "application/json"}
			}
			e := s.do(tt.method, tt.path, tt.body, headers...).expect(t, tt.status).errorBody(t)
			if tt.detail != "" {
				require.NotEmpty(t, e.Details)
				assert.Equal(t, tt.detail, e.Details[0].Path)
			}
		})
	}
	// Nothing was applied.
	cl, err := s.Store.GetCluster(t.Context(), "env")
	require.NoError(t, err)
	assert.Nil(t, cl.Settings)

	// The token applies to the new routes as to every route.
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPatch} {
		r := s.do(m, "/v1/clusters/env/settings", map[string]any{"settings": map[string]any{}}, "Authorization", "")
		assert.Equal(t, http.StatusUnauthorized, r.Status, m)
	}
	r := s.do(http.MethodGet, "/v1/graphs", nil, "Authorization", "")
	assert.Equal(t, http.StatusUnauthorized, r.Status)
}

func TestListAllGraphs(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t))
		s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r", "name": "r"}).expect(t, http.StatusCreated)
		s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p", "name": "p"}).expect(t, http.StatusCreated)
		s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "c1", "name": "c1", "releaseId": "r", "pluginIds": []string{"p"}}).expect(t, http.StatusCreated)
		s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "c2", "name": "c2", "releaseId": "r"}).expect(t, http.StatusCreated)
		graph := "apiVersion: cairn/v1\nkind: Graph\nmetadata: {name: Deploy}\ntasks:\n  - {id: a, type: shell, roles: ['*'], parameters: {cmd: echo a}}\n"
		for _, p := range []string{"/v1/releases/r/graphs/default", "/v1/releases/r/graphs/upgrade", "/v1/plugins/p/graphs/default", "/v1/clusters/c2/graphs/default"} {
			g := graph
			if p == "/v1/releases/r/graphs/upgrade" {
				g = "- {id: u, type: shell, roles: ['*'], parameters: {cmd: echo u}}\n"
			}
			s.do(http.MethodPut, p, []byte(g), "Content-Type", "application/yaml").expect(t, http.StatusCreated)
		}

		list := func(query string) []model.GraphMeta {
			var out struct {
				Graphs []model.GraphMeta `json:"graphs"`
			}
			s.do(http.MethodGet, "/v1/graphs"+query, nil).expect(t, http.StatusOK).json(t, &out)
			return out.Graphs
		}
		all := list("")
		require.Len(t, all, 4)
		byKey := map[string]model.GraphMeta{}
		for _, g := range all {
			byKey[string(g.Layer)+"/"+g.OwnerID+"/"+g.Type] = g
		}
		assert.Equal(t, []string{"c2"}, byKey["cluster/c2/default"].UsedBy)
		assert.Equal(t, []string{"c1"}, byKey["plugin/p/default"].UsedBy)
		assert.ElementsMatch(t, []string{"c1", "c2"}, byKey["release/r/default"].UsedBy)
		assert.Equal(t, "Deploy", byKey["release/r/default"].Name)

		tests := []struct {
			query string
			want  int
		}{
			{"?layer=release", 2},
			{"?type=upgrade", 1},
			{"?layer=release&owner=r&type=default", 1},
			{"?owner=nope", 0},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				got := list(tt.query)
				assert.Len(t, got, tt.want)
				assert.NotNil(t, got)
			})
		}
		// An owner's own listing carries the same relations.
		var owned struct {
			Graphs []model.GraphInfo `json:"graphs"`
		}
		s.do(http.MethodGet, "/v1/releases/r/graphs", nil).expect(t, http.StatusOK).json(t, &owned)
		require.Len(t, owned.Graphs, 2)
		assert.ElementsMatch(t, []string{"c1", "c2"}, owned.Graphs[0].UsedBy)
		assert.Equal(t, 1, owned.Graphs[0].Tasks)

		s.do(http.MethodGet, "/v1/graphs?layer=stack", nil).expect(t, http.StatusBadRequest)
		s.do(http.MethodGet, "/v1/graphs?type=a/b", nil).expect(t, http.StatusBadRequest)
	})
}

func TestMergedGraphLayers(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r", "name": "r"}).expect(t, http.StatusCreated)
	s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p", "name": "p"}).expect(t, http.StatusCreated)
	s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "c", "name": "c", "releaseId": "r", "pluginIds": []string{"p"}}).expect(t, http.StatusCreated)
	put := func(p, body string) {
		s.do(http.MethodPut, p, []byte(body), "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	}
	put("/v1/releases/r/graphs/default", "- {id: base, type: shell, roles: ['*'], parameters: {cmd: echo base}}\n")
	put("/v1/clusters/c/graphs/default", "- {id: mine, type: shell, roles: ['*'], requires: [base], parameters: {cmd: echo mine}}\n")
	put("/v1/plugins/p/graphs/default", "- {id: plug, type: shell, roles: ['*'], requires: [base], parameters: {cmd: echo plug}}\n")
	ids := func(query string) []string {
		var g struct {
			Tasks []struct {
				ID string `json:"id"`
			} `json:"tasks"`
		}
		s.do(http.MethodGet, "/v1/clusters/c/graphs/default/merged"+query, nil, "Accept", "application/json").expect(t, http.StatusOK).json(t, &g)
		var out []string
		for _, task := range g.Tasks {
			out = append(out, task.ID)
		}
		return out
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"base", "mine", "plug"}},
		{"?layers=release,cluster", []string{"base", "mine"}},
		{"?layers=plugins", []string{"plug"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) { assert.Equal(t, tt.want, ids(tt.query)) })
	}
	s.do(http.MethodGet, "/v1/clusters/c/graphs/default/merged?layers=stack", nil).expect(t, http.StatusBadRequest)
}

func TestCheckSettingsNamesEveryEmptyOrReservedKey(t *testing.T) {
	details := checkSettings(map[string]any{
		"a": map[string]any{"": 1, "b": map[string]any{"$cairnSealed": "x"}},
		"l": []any{map[string]any{"$cairn": 1}},
	}, "settings")
	var got []string
	for _, d := range details {
		got = append(got, d.Path+": "+d.Message)
	}
	assert.Equal(t, []string{
		"settings.a: a settings key cannot be empty",
		`settings.a.b.$cairnSealed: keys starting with "$cairn" are reserved`,
	}, got, "maps are checked at every depth; a list is a value")
}
