package api

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestOpenAPIMatchesRouter walks echo's routes and the OpenAPI paths both
// ways: every route is documented and every documented operation is
// served.
func TestOpenAPIMatchesRouter(t *testing.T) {
	st := openStore(t, sqliteURL(t))
	e, err := New(Config{}, Deps{Store: st})
	require.NoError(t, err)
	param := regexp.MustCompile(`:([A-Za-z]+)`)
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == "echo_route_not_found" {
			continue
		}
		routes[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}

	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(OpenAPI, &doc), "openapi.yaml")
	documented := map[string]bool{}
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true}
	for p, item := range doc.Paths {
		for m := range item {
			if methods[m] {
				documented[strings.ToUpper(m)+" "+p] = true
			}
		}
	}
	var missing, extra []string
	for r := range routes {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routes[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	assert.LessOrEqual(t, len(missing), 0, "routes missing from openapi.yaml:\n  %s", strings.Join(missing, "\n  "))
	assert.LessOrEqual(t, len(extra), 0, "openapi.yaml documents operations the router does not serve:\n  %s", strings.Join(extra, "\n  "))
	require.GreaterOrEqual(t, len(routes), 40, "only %d routes: the walk is broken", len(routes))

	// Every $ref points at a component that exists.
	var whole map[string]any
	require.NoError(t, yaml.Unmarshal(OpenAPI, &whole))
	var walk func(v any)
	walk = func(v any) {
		switch t2 := v.(type) {
		case map[string]any:
			for k, x := range t2 {
				if k == "$ref" {
					ref, _ := x.(string)
					parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
					var cur any = whole
					for _, p := range parts {
						m, ok := cur.(map[string]any)
						if !ok || m[p] == nil {
							t.Errorf("dangling $ref %q", ref)
							break
						}
						cur = m[p]
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range t2 {
				walk(x)
			}
		}
	}
	walk(whole)
}

func TestOpenAPIServed(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	r := s.do(http.MethodGet, "/openapi.yaml", nil).expect(t, http.StatusOK)
	require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/yaml"), "served %q (%d bytes)", r.Header.Get("Content-Type"), len(r.Body))
	require.Equal(t, string(OpenAPI), string(r.Body), "served %q (%d bytes)", r.Header.Get("Content-Type"), len(r.Body))
	var v map[string]any
	err := yaml.Unmarshal(r.Body, &v)
	require.NoError(t, err, "not an OpenAPI document")
	require.NotNil(t, v["openapi"], "not an OpenAPI document: %v", err)
}
