package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// backend is one database the store-backed tests run against.
type backend struct {
	name string
	url  func(t testing.TB) string
}

var backends = []backend{
	{"sqlite", func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "cairn.db") }},
	{"postgres", testenv.FreshPostgres},
}

// eachBackend runs fn once per database.
func eachBackend(t *testing.T, fn func(t *testing.T, be backend)) {
	t.Helper()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { fn(t, be) })
	}
}

func openStore(t testing.TB, dbURL string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL)
	require.NoError(t, err, "open store")
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// testServer is the API over a real store behind a real HTTP server.
type testServer struct {
	t     testing.TB
	URL   string
	Store store.Store
	Token string
	logs  *lockedBuffer
}

type serverOption func(*Config, *Deps)

func withToken(token string) serverOption {
	return func(c *Config, _ *Deps) { c.Token = token }
}

func withConfig(fn func(*Config)) serverOption {
	return func(c *Config, _ *Deps) { fn(c) }
}

func withDeps(fn func(*Deps)) serverOption {
	return func(_ *Config, d *Deps) { fn(d) }
}

func newTestServer(t testing.TB, dbURL string, opts ...serverOption) *testServer {
	t.Helper()
	st := openStore(t, dbURL)
	logs := &lockedBuffer{}
	cfg := Config{}
	deps := Deps{Store: st, Logger: newTestLogger(logs)}
	for _, o := range opts {
		o(&cfg, &deps)
	}
	e, err := New(cfg, deps)
	require.NoError(t, err, "api.New")
	t.Cleanup(func() { require.NoError(t, e.Close(context.Background())) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &testServer{t: t, URL: srv.URL, Store: st, Token: cfg.Token, logs: logs}
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// response is a finished request.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) json(t testing.TB, v any) {
	t.Helper()
	err := json.Unmarshal(r.Body, v)
	require.NoError(t, err, "decode %s: %v", r.Body, err)
}

// errorBody decodes the error shape, failing when the body is not in it.
func (r *response) errorBody(t testing.TB) model.ErrorInfo {
	t.Helper()
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Body, &raw), "error body is not JSON (status %d): %s", r.Status, r.Body)
	var body model.ErrorBody
	dec := json.NewDecoder(bytes.NewReader(raw["error"]))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body.Error)
	require.NoError(t, err, "error body not in the error shape: %v: %s", err, r.Body)
	require.NotEmpty(t, body.Error.Code, "error shape incomplete: %s", r.Body)
	require.NotEmpty(t, body.Error.Message, "error shape incomplete: %s", r.Body)
	require.NotNil(t, body.Error.Details, "error shape incomplete: %s", r.Body)
	want := codeFor(r.Status)
	require.Equal(t, want, body.Error.Code, "code %q for status %d, want %q", body.Error.Code, r.Status, want)
	return body.Error
}

// do sends a request; body may be nil, []byte, string or a value sent as JSON.
func (s *testServer) do(method, path string, body any, headers ...string) *response {
	s.t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(s.t, err)
		rd = bytes.NewReader(data)
		ctype = "application/json"
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	require.NoError(s.t, err)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err, "%s %s: %v", method, path, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// expect fails unless the status is want; for errors it checks the shape.
func (r *response) expect(t testing.TB, want int) *response {
	t.Helper()
	require.Equal(t, want, r.Status, "status %d, want %d: %s", r.Status, want, r.Body)
	if want >= 400 {
		r.errorBody(t)
	}
	return r
}

// lockedBuffer collects log lines written by concurrent handlers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	// Jsonnet posted to the API runs in a child process: this binary.
	graphs.ServeJsonnetChild()
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}
