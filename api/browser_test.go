package api

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// browserRequest is a request as a browser (or a forger) would send it:
// any Host and Origin, any body and content type.
type browserRequest struct {
	method, path string
	host         string // "" keeps the URL's own
	origin       string
	ctype        string
	body         string
	token        string
	headers      map[string]string
	hideLength   bool // send the body chunked, without a Content-Length
}

func send(t *testing.T, base string, r browserRequest) *response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
		if r.hideLength {
			body = io.MultiReader(body)
		}
	}
	req, err := http.NewRequest(r.method, base+r.path, body)
	require.NoError(t, err)
	if r.host != "" {
		req.Host = r.host
	}
	if r.origin != "" {
		req.Header.Set("Origin", r.origin)
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// stackNames lists the stacks in the store.
func stackNames(t *testing.T, s *testServer) []string {
	t.Helper()
	var list struct {
		Stacks []struct {
			Name string `json:"name"`
		} `json:"stacks"`
	}
	s.do(http.MethodGet, "/v1/stacks", nil).expect(t, http.StatusOK).json(t, &list)
	names := []string{}
	for _, st := range list.Stacks {
		names = append(names, st.Name)
	}
	return names
}

// Without a token a domain rebound to 127.0.0.1 must not reach the API:
// only loopback Hosts are answered.
func TestTokenlessServerAnswersOnlyLoopbackHosts(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]

	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example:" + port,
		"localhost.evil.example", "10.0.0.1:" + port, "[fe80::1]:" + port, "0.0.0.0:" + port} {
		t.Run("refused "+host, func(t *testing.T) {
			get := send(t, s.URL, browserRequest{method: http.MethodGet, path: "/v1/stacks", host: host})
			get.expect(t, http.StatusMisdirectedRequest)
			assert.Contains(t, get.errorBody(t).Message, "loopback")
			send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", host: host,
				ctype: "application/json", body: `{"name": "rebound"}`}).expect(t, http.StatusMisdirectedRequest)
		})
	}
	assert.Empty(t, stackNames(t, s), "a refused Host created a stack")

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port, "127.0.0.2", "[::1]"} {
		t.Run("served "+host, func(t *testing.T) {
			send(t, s.URL, browserRequest{method: http.MethodGet, path: "/v1/stacks", host: host}).expect(t, http.StatusOK)
		})
	}
}

// With a token the token is what keeps others out, so any Host is served.
func TestServerWithTokenAnswersAnyHost(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withToken("s3cret"))
	send(t, s.URL, browserRequest{method: http.MethodGet, path: "/v1/stacks", host: "cairn.example.com"}).
		expect(t, http.StatusUnauthorized)
	send(t, s.URL, browserRequest{method: http.MethodGet, path: "/v1/stacks", host: "cairn.example.com", token: "s3cret"}).
		expect(t, http.StatusOK)
}

// A page on another origin may not change anything, with or without a
// token; the server's own origin and requests without Origin may.
func TestForeignOriginsCannotChangeState(t *testing.T) {
	for _, token := range []string{"", "s3cret"} {
		t.Run("token "+map[bool]string{true: "set", false: "unset"}[token != ""], func(t *testing.T) {
			s := newTestServer(t, sqliteURL(t), withToken(token))
			own := "http://" + strings.TrimPrefix(s.URL, "http://")
			for _, o := range []string{"http://evil.example", "null", "http://localhost:8233", "https://127.0.0.1", "garbage"} {
				r := send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", origin: o, token: token,
					ctype: "application/json", body: `{"name": "forged"}`})
				r.expect(t, http.StatusForbidden)
				assert.Contains(t, r.errorBody(t).Message, "may not change")
				send(t, s.URL, browserRequest{method: http.MethodDelete, path: "/v1/stacks/x", origin: o, token: token}).
					expect(t, http.StatusForbidden)
			}
			assert.Empty(t, stackNames(t, s), "a foreign origin created a stack")

			send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", origin: own, token: token,
				ctype: "application/json", body: `{"name": "same-origin"}`}).expect(t, http.StatusCreated)
			send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", token: token,
				ctype: "application/json", body: `{"name": "no-origin"}`}).expect(t, http.StatusCreated)
			assert.ElementsMatch(t, []string{"same-origin", "no-origin"}, stackNames(t, s))

			// Reading is not refused (the browser cannot read the answer
			// without CORS, which a foreign origin does not get).
			r := send(t, s.URL, browserRequest{method: http.MethodGet, path: "/v1/stacks", origin: "http://evil.example", token: token})
			r.expect(t, http.StatusOK)
			assert.Empty(t, r.Header.Get("Access-Control-Allow-Origin"))
		})
	}
}

// An origin configured for a UI on another origin gets CORS and may change
// state; a preflight from any other origin is refused.
func TestAllowedOriginsGetCORS(t *testing.T) {
	const ui = "https://console.example:8443"
	s := newTestServer(t, sqliteURL(t), withToken("s3cret"), withConfig(func(c *Config) { c.AllowedOrigins = []string{ui} }))

	pre := send(t, s.URL, browserRequest{method: http.MethodOptions, path: "/v1/stacks", origin: ui,
		headers: map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}})
	require.Equal(t, http.StatusNoContent, pre.Status, "%s", pre.Body)
	assert.Equal(t, ui, pre.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Methods"), "POST")
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), "Authorization")
	assert.Contains(t, pre.Header.Values("Vary"), "Origin")

	created := send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", origin: ui, token: "s3cret",
		ctype: "application/json", body: `{"name": "from-ui"}`})
	created.expect(t, http.StatusCreated)
	assert.Equal(t, ui, created.Header.Get("Access-Control-Allow-Origin"))

	send(t, s.URL, browserRequest{method: http.MethodOptions, path: "/v1/stacks", origin: "http://evil.example",
		headers: map[string]string{"Access-Control-Request-Method": "POST"}}).expect(t, http.StatusForbidden)

	_, err := New(Config{AllowedOrigins: []string{"http://ui.example/path"}}, Deps{Store: s.Store})
	assert.ErrorContains(t, err, "allowed origins")
}

// The content types a browser may send across origins without a preflight
// (and none at all) are refused, on every route, whether or not the route
// reads its body.
func TestBodiesNeedADocumentContentType(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", ""} {
		for _, route := range []struct{ method, path, body string }{
			{http.MethodPost, "/v1/stacks", `{"name": "plain"}`},
			{http.MethodPost, "/v1/packages/validate", "kind: Directory\nmetadata: {name: d}\nspec: {path: /d}\n"},
			{http.MethodPost, "/v1/stacks/none/apply", "kind: Directory\nmetadata: {name: d}\nspec: {path: /d}\n"},
			{http.MethodPost, "/v1/executions/none/cancel", "x"},
			{http.MethodPut, "/v1/releases/r1", `{"name": "r"}`},
		} {
			for _, chunked := range []bool{false, true} {
				r := send(t, s.URL, browserRequest{method: route.method, path: route.path, ctype: ct, body: route.body, hideLength: chunked})
				r.expect(t, http.StatusUnsupportedMediaType)
			}
		}
	}
	assert.Empty(t, stackNames(t, s))
	send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", ctype: "application/json; charset=utf-8",
		body: `{"name": "json"}`}).expect(t, http.StatusCreated)
	send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/packages/validate", ctype: "application/yaml",
		body: "kind: Directory\nmetadata: {name: d}\nspec: {path: /d}\n"}).expect(t, http.StatusOK)
}

// A real apply from a token-less server's own origin and from the CLI runs;
// the same apply from a foreign origin is refused before anything runs.
func TestForeignOriginCannotApply(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.Token = "" }})
	stack, err := h.client.CreateStack(ctxTimeout(t, time.Minute), model.StackInput{Name: "browser"})
	require.NoError(t, err)
	st := stack.ID
	dir := t.TempDir()
	pkg := func(name string) string {
		return "kind: File\nmetadata: {name: f}\nspec: {path: " + filepath.Join(dir, name) + ", content: applied}\n"
	}
	applyPath := "/v1/stacks/" + url.PathEscape(st) + "/apply?wait=true"
	u, err := url.Parse(h.url)
	require.NoError(t, err)

	forged := send(t, h.url, browserRequest{method: http.MethodPost, path: applyPath, origin: "http://evil.example",
		ctype: "application/yaml", body: pkg("forged")})
	forged.expect(t, http.StatusForbidden)
	forgedPlain := send(t, h.url, browserRequest{method: http.MethodPost, path: applyPath, origin: "http://evil.example",
		ctype: "text/plain", body: pkg("forged")})
	assert.Contains(t, []int{http.StatusForbidden, http.StatusUnsupportedMediaType}, forgedPlain.Status)
	rebound := send(t, h.url, browserRequest{method: http.MethodPost, path: applyPath, host: "evil.example:" + u.Port(),
		origin: "http://evil.example:" + u.Port(), ctype: "application/yaml", body: pkg("forged")})
	rebound.expect(t, http.StatusMisdirectedRequest)

	own := send(t, h.url, browserRequest{method: http.MethodPost, path: applyPath, origin: "http://" + u.Host,
		ctype: "application/yaml", body: pkg("same-origin")})
	require.Equal(t, http.StatusOK, own.Status, "%s", own.Body)
	cli := send(t, h.url, browserRequest{method: http.MethodPost, path: applyPath, ctype: "application/yaml", body: pkg("cli")})
	require.Equal(t, http.StatusOK, cli.Status, "%s", cli.Body)

	for _, name := range []string{"same-origin", "cli"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Equal(t, "applied", string(data))
	}
	assert.NoFileExists(t, filepath.Join(dir, "forged"))
}
