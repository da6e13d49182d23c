package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzServer is the API over a real SQLite store with a release r1 and a
// graph of it, for fuzz targets that call it in process.
func fuzzServer(f *testing.F, cfg Config) http.Handler {
	f.Helper()
	e, err := New(cfg, Deps{Store: openStore(f, sqliteURL(f))})
	require.NoError(f, err)
	for _, r := range []struct{ method, path, ctype, body string }{
		{http.MethodPost, "/v1/releases", "application/json", `{"id": "r1", "name": "r"}`},
		{http.MethodPut, "/v1/releases/r1/graphs/g", "application/yaml", releaseTasksYAML},
	} {
		req := httptest.NewRequest(r.method, r.path, bytes.NewReader([]byte(r.body)))
		req.Host = "127.0.0.1:8080"
		req.Header.Set("Content-Type", r.ctype)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		require.Less(f, rec.Code, 300, "%s %s: %d %s", r.method, r.path, rec.Code, rec.Body)
	}
	return e
}

// checkAnswer holds for every answer: never a 5xx, and errors in the error
// shape.
func checkAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Less(t, rec.Code, 500, "%s answered %d: %s", what, rec.Code, rec.Body)
	if rec.Code >= 400 {
		(&response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}).errorBody(t)
	} else if ct := rec.Header().Get("Content-Type"); len(ct) >= 16 && ct[:16] == "application/json" && !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("%s answered invalid JSON: %s", what, rec.Body)
	}
}

// FuzzJSONRequests sends arbitrary bodies under JSON-ish and other content
// types to every route that decodes a JSON request (api/decode.go): the
// answer is a 2xx or a 4xx in the error shape, never a 5xx or a panic.
func FuzzJSONRequests(f *testing.F) {
	seeds := []string{
		`{"name": "s"}`,
		`{"id": "r2", "name": "r", "description": "d"}`,
		`{"id": "c1", "name": "c", "releaseId": "r1", "nodes": [{"name": "n", "roles": ["web"], "mode": "local"}]}`,
		`{"kind": "file", "dir": "/tmp", "names": ["a"], "recursive": true}`,
		`{"types": ["g", "g"], "nodes": ["n"], "tasks": [], "onFailure": "pause", "parallelism": -1}`,
		`{"name": "s", "urls": ["file:///etc/passwd", "http://[::1]:0/x", "gopher://x"]}`,
		`{"name": "s"} {"name": "t"}`,
		`{"name": 5}`,
		`{"nmae": "s"}`,
		`{"name": "\ud800"}`,
		"{\"name\":\n\"s\",\n}",
		`[`, ``, `null`, `1e999`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), uint8(i))
	}
	e := fuzzServer(f, Config{})
	routes := []struct{ method, path string }{
		{http.MethodPost, "/v1/stacks"},
		{http.MethodPost, "/v1/releases"},
		{http.MethodPut, "/v1/releases/r1"},
		{http.MethodPost, "/v1/plugins"},
		{http.MethodPost, "/v1/clusters"},
		{http.MethodPost, "/v1/export"},
		{http.MethodPost, "/v1/clusters/none/executions"},
	}
	types := []string{"application/json", "application/json; charset=utf-8", "application/merge-patch+json",
		"application/yaml", "text/plain", "", "application/json; charset", "multipart/form-data"}
	f.Fuzz(func(t *testing.T, body []byte, route, ct uint8) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
		req.Host = "127.0.0.1:8080"
		if c := types[int(ct)%len(types)]; c != "" {
			req.Header.Set("Content-Type", c)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		checkAnswer(t, r.method+" "+r.path, rec)
	})
}

// FuzzRequestHeaders varies what the API reads from headers: Accept and
// ?format= (negotiate, acceptsVerbatim), Content-Type (mediaType), Origin
// and Host (the browser checks). Beyond never failing with a 5xx, the
// browser checks hold: without a token a non-loopback Host is never
// served, and a state-changing request from a foreign Origin never
// succeeds.
func FuzzRequestHeaders(f *testing.F) {
	f.Add("application/json", "", "application/yaml", "", "127.0.0.1:8080")
	f.Add("text/*;q=0.5, application/json;q=0.9", "yaml", "application/x-yaml; charset=utf-8", "http://127.0.0.1:8080", "127.0.0.1:8080")
	f.Add("*/*;q=0", "JSON", "application/jsonnet", "http://evil.example", "localhost:8080")
	f.Add("application/vnd.x+json, */*;q=nan", "yml", "text/plain", "null", "[::1]:8080")
	f.Add(";;,", "x", "application/json; a=\"", "http://127.0.0.1:8080/", "evil.example")
	f.Add("application/yaml;q=0", "", "", "HTTP://LOCALHOST:8080", "localhost:8080")
	f.Add("", "", "application/json", "http://[::1]:8080", "[::1]:8080")
	f.Add("", "", "application/json", "https://127.0.0.1", "127.0.0.1:443")
	e := fuzzServer(f, Config{})
	f.Fuzz(func(t *testing.T, accept, format, ctype, origin, host string) {
		get := httptest.NewRequest(http.MethodGet, "/v1/releases/r1/graphs/g", nil)
		get.Host = "127.0.0.1:8080"
		if format != "" {
			get.URL.RawQuery = "format=" + url.QueryEscape(format)
		}
		get.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, get)
		checkAnswer(t, "GET graph", rec)

		post := httptest.NewRequest(http.MethodPost, "/v1/packages/validate", bytes.NewReader([]byte(validPackageYAML)))
		post.Host = host
		post.Header.Set("Content-Type", ctype)
		if origin != "" {
			post.Header.Set("Origin", origin)
		}
		rec = httptest.NewRecorder()
		e.ServeHTTP(rec, post)
		checkAnswer(t, "POST validate", rec)
		if rec.Code >= 300 {
			return
		}
		require.True(t, loopbackHost(host), "Host %q served without a token", host)
		if origin != "" {
			o, err := parseOrigin(origin)
			require.NoError(t, err, "Origin %q changed state on Host %q", origin, host)
			require.True(t, sameOrigin(o, host), "Origin %q changed state on Host %q", origin, host)
		}
	})
}
