package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

func sqliteURL(t testing.TB) string {
	return "sqlite://" + filepath.Join(t.TempDir(), "cairn.db")
}

func TestErrorShapeOnRoutingErrors(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	tests := []struct {
		name, method, path string
		want               int
	}{
		{"unknown route", http.MethodGet, "/v1/nothing-here", http.StatusNotFound},
		{"unknown stack", http.MethodGet, "/v1/stacks/missing", http.StatusNotFound},
		{"method not allowed", http.MethodPatch, "/v1/stacks", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(tt.method, tt.path, nil).expect(t, tt.want)
			ct := r.Header.Get("Content-Type")
			require.True(t, strings.HasPrefix(ct, "application/json"), "content type %q", ct)
		})
	}
}

func TestBearerToken(t *testing.T) {
	const token = "s3cret-token"
	on := newTestServer(t, sqliteURL(t), withToken(token))
	off := newTestServer(t, sqliteURL(t))
	tests := []struct {
		name   string
		srv    *testServer
		path   string
		header string // "" sends none
		want   int
	}{
		{"no header", on, "/v1/stacks", "", http.StatusUnauthorized},
		{"wrong token", on, "/v1/stacks", "Bearer nope", http.StatusUnauthorized},
		{"token prefix only", on, "/v1/stacks", "Bearer s3cret", http.StatusUnauthorized},
		{"basic scheme", on, "/v1/stacks", "Basic " + token, http.StatusUnauthorized},
		{"right token", on, "/v1/stacks", "Bearer " + token, http.StatusOK},
		{"scheme case-insensitive", on, "/v1/stacks", "bearer " + token, http.StatusOK},
		{"metrics need the token", on, "/metrics", "", http.StatusUnauthorized},
		{"openapi needs the token", on, "/openapi.yaml", "", http.StatusUnauthorized},
		{"unknown route needs the token", on, "/v1/nothing", "", http.StatusUnauthorized},
		{"healthz open", on, "/healthz", "", http.StatusOK},
		{"readyz open", on, "/readyz", "", http.StatusOK},
		{"auth off", off, "/v1/stacks", "", http.StatusOK},
		{"auth off ignores header", off, "/v1/stacks", "Bearer whatever", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := *tt.srv
			client.Token = ""
			client.t = t
			r := client.do(http.MethodGet, tt.path, nil, "Authorization", tt.header).expect(t, tt.want)
			if tt.want == http.StatusUnauthorized {
				require.True(t, strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer"), "401 without WWW-Authenticate: %v", r.Header)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withConfig(func(c *Config) { c.BodyLimit = 1024 }))
	big := `{"name": "` + strings.Repeat("x", 4096) + `"}`
	t.Run("declared length", func(t *testing.T) {
		s.do(http.MethodPost, "/v1/stacks", big, "Content-Type", "application/json").expect(t, http.StatusRequestEntityTooLarge)
	})
	t.Run("chunked", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/v1/releases", io.MultiReader(strings.NewReader(big)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = -1
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		(&response{Status: resp.StatusCode, Header: resp.Header, Body: body}).expect(t, http.StatusRequestEntityTooLarge)
	})
	stacks, err := s.Store.ListStacks(context.Background())
	require.NoError(t, err, "stacks after refused bodies: %v %v", stacks, err)
	require.Empty(t, stacks, "stacks after refused bodies: %v %v", stacks, err)
	releases, err := s.Store.ListReleases(context.Background())
	require.NoError(t, err, "releases after refused bodies: %v %v", releases, err)
	require.Empty(t, releases, "releases after refused bodies: %v %v", releases, err)
	// Under the limit still works.
	s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "small"}).expect(t, http.StatusCreated)
}

func TestDefaultBodyLimitIsTenMegabytes(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	huge := bytes.Repeat([]byte("a"), DefaultBodyLimit+1)
	s.do(http.MethodPost, "/v1/stacks", huge, "Content-Type", "application/json").expect(t, http.StatusRequestEntityTooLarge)
}

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"[::1]:8080", "", true},
		{"127.0.0.2:8080", "", true},
		{":8080", "", false},
		{"0.0.0.0:8080", "", false},
		{"[::]:8080", "", false},
		{"10.1.2.3:8080", "", false},
		{"example.com:8080", "", false},
		{":8080", "tok", true},
		{"10.1.2.3:8080", "tok", true},
		{"no-port", "tok", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr+"/"+tt.token, func(t *testing.T) {
			err := CheckListen(tt.addr, tt.token != "")
			require.Equal(t, tt.ok, err == nil, "CheckListen(%q, %q) = %v, want ok=%v", tt.addr, tt.token, err, tt.ok)
		})
	}
}

func TestReadyz(t *testing.T) {
	t.Run("ready", func(t *testing.T) {
		s := newTestServer(t, sqliteURL(t), withDeps(func(d *Deps) { d.Ready = func(context.Context) error { return nil } }))
		s.do(http.MethodGet, "/readyz", nil).expect(t, http.StatusOK)
		s.do(http.MethodGet, "/healthz", nil).expect(t, http.StatusOK)
	})
	t.Run("temporal down", func(t *testing.T) {
		s := newTestServer(t, sqliteURL(t), withDeps(func(d *Deps) {
			d.Ready = func(context.Context) error { return errors.New("dial tcp 10.0.0.9:7233: refused") }
		}))
		e := s.do(http.MethodGet, "/readyz", nil).expect(t, http.StatusServiceUnavailable).errorBody(t)
		require.Len(t, e.Details, 1, "details")
		require.Equal(t, "temporal", e.Details[0].Path, "details %+v", e.Details)
		require.NotContains(t, e.Details[0].Message, "10.0.0.9", "open probe leaks the cause")
		s.do(http.MethodGet, "/healthz", nil).expect(t, http.StatusOK)
	})
	t.Run("store closed", func(t *testing.T) {
		s := newTestServer(t, sqliteURL(t))
		_ = s.Store.Close()
		e := s.do(http.MethodGet, "/readyz", nil).expect(t, http.StatusServiceUnavailable).errorBody(t)
		require.Len(t, e.Details, 1, "details")
		require.Equal(t, "store", e.Details[0].Path, "details %+v", e.Details)
	})
}

func TestRequestIDInHeaderAndLogs(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	r := s.do(http.MethodGet, "/v1/stacks", nil, RequestIDHeader, "abc-123")
	got := r.Header.Get(RequestIDHeader)
	require.Equal(t, "abc-123", got, "request id %q, want the caller's", got)
	r = s.do(http.MethodGet, "/v1/stacks", nil, RequestIDHeader, "bad id <script>")
	generated := r.Header.Get(RequestIDHeader)
	require.NotEmpty(t, generated, "request id %q, want a generated one", generated)
	require.False(t, strings.ContainsAny(generated, " <>"), "request id %q, want a generated one", generated)
	logs := s.logs.String()
	for _, id := range []string{`"request_id":"abc-123"`, `"request_id":"` + generated + `"`} {
		require.Contains(t, logs, id, "logs lack %s:\n%s", id, logs)
	}
}

func TestPanicBecomes500InErrorShape(t *testing.T) {
	st := openStore(t, sqliteURL(t))
	logs := &lockedBuffer{}
	// A route of its own would have no permission rule and be refused
	// before its handler runs: the codec endpoint's handler panics instead.
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") })
	e, err := New(Config{}, Deps{Store: st, Logger: newTestLogger(logs), Codec: boom})
	require.NoError(t, err)
	srv := httptest.NewServer(e)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/codec/decode", "application/json", strings.NewReader(`{"payloads": []}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	info := (&response{Status: resp.StatusCode, Header: resp.Header, Body: body}).expect(t, http.StatusInternalServerError).errorBody(t)
	require.NotContains(t, info.Message, "kaboom", "panic value leaked to the client")
	require.Contains(t, logs.String(), "kaboom", "panic not logged")
	// The server still serves.
	resp2, err := http.Get(srv.URL + "/healthz")
	require.NoError(t, err, "after panic: %v %v", resp2, err)
	require.Equal(t, http.StatusOK, resp2.StatusCode, "after panic: %v %v", resp2, err)
	resp2.Body.Close()
}

// failingStacks fails every read of a stack, as a store that is down does.
type failingStacks struct{ store.Store }

func (failingStacks) GetStack(context.Context, string) (*model.Stack, error) {
	return nil, errors.New("database is down")
}

// TestServerErrorsNameTheirRoute: a 500 is logged with its method and the
// route's template (what failed, without the id it was asked for), its
// status and cause; the client gets the error shape, not the cause.
func TestServerErrorsNameTheirRoute(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withDeps(func(d *Deps) { d.Store = failingStacks{d.Store} }))
	r := s.do(http.MethodGet, "/v1/stacks/st-123", nil).expect(t, http.StatusInternalServerError)
	require.NotContains(t, string(r.Body), "database is down")
	logs := s.logs.String()
	require.Contains(t, logs, `"msg":"request failed"`)
	require.Contains(t, logs, `"method":"GET"`)
	require.Contains(t, logs, `"route":"/v1/stacks/:id"`)
	require.Contains(t, logs, `"error":"`)
	require.NotContains(t, logs, `"route":"/v1/stacks/st-123"`)
}
