package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
)

func TestKindsRoutes(t *testing.T) {
	cat := kinds.Builtin()
	require.NoError(t, cat.Add(kinds.Kind{Name: "Label", Base: kinds.KindHTTP, Wrap: "body",
		Defaults: map[string]any{"url": "http://127.0.0.1", "path": "/labels"},
		Schema:   []byte(`{"type": "object", "properties": {"name": {"type": "string"}}}`)}))
	s := newTestServer(t, sqliteURL(t), withToken("tok"), withDeps(func(d *Deps) { d.Catalogue = cat }))

	t.Run("list", func(t *testing.T) {
		var list KindList
		s.do(http.MethodGet, "/v1/kinds", nil).expect(t, http.StatusOK).json(t, &list)
		names := map[string]string{}
		for _, d := range list.Kinds {
			names[d.Name] = d.Type
		}
		assert.Equal(t, kinds.TypeKind, names["exec"])
		assert.Equal(t, kinds.TypeDerived, names["Label"], "a kind of the server's catalogue")
		assert.Equal(t, kinds.TypeTaskType, names["puppet"])
	})

	tests := []struct {
		name     string
		path     string
		want     int
		wantType string
		wantAttr string
	}{
		{"a kind", "/v1/kinds/exec", http.StatusOK, kinds.TypeKind, "unchangedReturns"},
		{"case-insensitive", "/v1/kinds/FILE", http.StatusOK, kinds.TypeKind, "path"},
		{"a task type", "/v1/kinds/puppet", http.StatusOK, kinds.TypeTaskType, "puppet_manifest"},
		{"a derived kind", "/v1/kinds/label", http.StatusOK, kinds.TypeDerived, "name"},
		{"unknown", "/v1/kinds/exe", http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(http.MethodGet, tt.path, nil).expect(t, tt.want)
			if tt.want != http.StatusOK {
				assert.Contains(t, r.errorBody(t).Message, `did you mean "exec"`)
				return
			}
			var d kinds.Description
			r.json(t, &d)
			assert.Equal(t, tt.wantType, d.Type)
			var attrs []string
			for _, a := range d.Attributes {
				attrs = append(attrs, a.Name)
			}
			assert.Contains(t, attrs, tt.wantAttr)
		})
	}

	t.Run("behind the token", func(t *testing.T) {
		anon := *s
		anon.Token = ""
		anon.do(http.MethodGet, "/v1/kinds", nil).expect(t, http.StatusUnauthorized)
	})
}
