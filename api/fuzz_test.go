package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDocumentRoutes sends arbitrary bodies in every document encoding to
// the routes that read documents: whatever comes in, the answer is a 2xx or
// a 4xx in the error shape, never a 5xx and never a panic.
func FuzzDocumentRoutes(f *testing.F) {
	seeds := []string{
		validPackageYAML,
		releaseTasksYAML,
		clusterGraphJSON,
		pluginOneJsonnet,
		"a: &a [*a, *a]\n",
		"{",
		"local f(x) = f(x); f(1)",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
		"kind: File\nmetadata: {name: x}\nspec: {path: 5}\n",
		"- id: a\n  type: shell\n  requires: [a]\n",
		"\xff\xfe\x00garbage",
		"std.extVar('nope')",
	}
	for _, s := range seeds {
		for ct := range 3 {
			f.Add([]byte(s), uint8(ct))
		}
	}
	st := openStore(f, sqliteURL(f))
	e, err := New(Config{}, Deps{Store: st})
	require.NoError(f, err)
	setup := httptest.NewRecorder()
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/v1/releases", bytes.NewReader([]byte(`{"id": "r1", "name": "r"}`))),
		httptest.NewRequest(http.MethodPost, "/v1/stacks", bytes.NewReader([]byte(`{"name": "s"}`))),
	} {
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		e.ServeHTTP(setup, req)
	}
	types := []string{"application/yaml", "application/json", "application/jsonnet"}
	f.Fuzz(func(t *testing.T, body []byte, ct uint8) {
		for _, route := range []struct{ method, path string }{
			{http.MethodPost, "/v1/packages/validate"},
			{http.MethodPut, "/v1/releases/r1/graphs/fuzz"},
		} {
			req := httptest.NewRequest(route.method, route.path, bytes.NewReader(body))
			req.Host = "127.0.0.1"
			req.Header.Set("Content-Type", types[int(ct)%len(types)])
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			require.Less(t, rec.Code, 500, "%s %s answered %d for %q: %s", route.method, route.path, rec.Code, body, rec.Body)
			if rec.Code >= 400 {
				(&response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}).errorBody(t)
			}
		}
	})
}
