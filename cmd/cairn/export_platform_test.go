package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// thingsAPI serves a collection of two objects at /api/things to requests
// carrying the bearer token; thing 7 is linked to the label red-team.
func thingsAPI(t *testing.T, token string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.Method != http.MethodGet {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/api/things":
		case "/api/things/7/labels":
			_ = json.NewEncoder(w).Encode([]any{map[string]any{"id": "red-team"}})
			return
		case "/api/things/8/labels":
			_ = json.NewEncoder(w).Encode([]any{})
			return
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode([]any{
			map[string]any{"id": 7, "name": "alpha", "color": "red"},
			map[string]any{"id": 8, "name": "beta", "color": "blue"},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestExportByPlatformID(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{})
	const token = "tok-51a0"
	api := thingsAPI(t, token)
	secrets := s.file("api.secrets", "TOKEN="+token+"\n")
	header := `Authorization=Bearer {{ secret "TOKEN" }}`
	specFile := s.file("where.yaml", "url: {envRef: {key: THINGS_URL}}\npath: /api/things\n")

	type doc struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     map[string]any
	}
	exported := func(t *testing.T, args ...string) []doc {
		t.Helper()
		r := s.run(append([]string{"export", "-o", "json"}, args...)...).expect(t, 0)
		require.NotContains(t, r.stdout, token, "the secret stays a reference")
		var docs []doc
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &docs), r.stdout)
		return docs
	}

	tests := []struct {
		name  string
		args  []string
		names []string
	}{
		{"KIND:ID selects the kind", []string{"--id", "http:8", "--url", api.URL, "--path", "/api/things", "--header", header, "--secrets-file", secrets}, []string{"beta"}},
		{"ids with --kind", []string{"--kind", "http", "--id", "7", "--id", "8", "--url", api.URL, "--path", "/api/things", "--header", header, "--secret", "TOKEN=" + token}, []string{"alpha", "beta"}},
		{"a spec file with refs", []string{"--id", "http:7", "--spec-file", specFile, "--env", "THINGS_URL=" + api.URL, "--header", header, "--secrets-file", secrets}, []string{"alpha"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := exported(t, tt.args...)
			var names []string
			for _, d := range docs {
				names = append(names, d.Metadata.Name)
				assert.Equal(t, "http", d.Kind)
				assert.Equal(t, map[string]any{"Authorization": `Bearer {{ secret "TOKEN" }}`}, d.Spec["headers"], "the header as written")
				assert.NotEmpty(t, d.Spec["id"], "the platform id")
			}
			assert.Equal(t, tt.names, names)
		})
	}
	t.Run("the spec file's refs stay refs", func(t *testing.T) {
		docs := exported(t, tests[2].args...)
		require.Len(t, docs, 1)
		assert.Equal(t, "7", docs[0].Spec["id"])
		assert.Equal(t, map[string]any{"color": "red", "name": "alpha"}, docs[0].Spec["body"])
		assert.Equal(t, map[string]any{"envRef": map[string]any{"key": "THINGS_URL"}}, docs[0].Spec["url"], "the url as written")
	})
	t.Run("by label of the platform", func(t *testing.T) {
		docs := exported(t, "--kind", "http", "--label", "red-team", "--links-path", "/labels", "--url", api.URL, "--path", "/api/things",
			"--header", header, "--secrets-file", secrets)
		require.Len(t, docs, 1)
		assert.Equal(t, "alpha", docs[0].Metadata.Name)
		assert.Equal(t, map[string]any{"path": "/labels", "field": "labelID", "ids": []any{"red-team"}}, docs[0].Spec["links"])
	})
	t.Run("refused", func(t *testing.T) {
		s.run("export", "--id", "http:9", "--url", api.URL, "--path", "/api/things", "--header", header, "--secrets-file", secrets).
			expect(t, 1).hasErr(t, "422", `no http object has id "9"`)
		s.run("export", "--id", "http:7", "--url", api.URL, "--path", "/api/things", "--header", header).
			expect(t, 1).hasErr(t, "selector.secrets.TOKEN")
		s.run("export", "--id", "http:", "--url", api.URL).expect(t, 1).hasErr(t, `--id "http:"`)
		s.run("export", "--kind", "http", "--header", "nope", "--url", api.URL).expect(t, 1).hasErr(t, "want NAME=VALUE")
	})
}
