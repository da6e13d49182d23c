package api

import (
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUIServesItsShellWithCSP checks every page and asset: served without
// a token (the shell carries no data) with its content type, a strict
// Content-Security-Policy and nosniff, while the data routes the pages
// call still want the token.
func TestUIServesItsShellWithCSP(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withToken("s3cret"))
	tests := []struct {
		path, ctype, contains string
	}{
		{"/ui/", "text/html; charset=utf-8", `src="/ui/assets/list.js"`},
		{"/ui/executions/cairn-apply-x.0d2c1e7a-1b7c-4b59-9d0e-2c8e9a7f6b10", "text/html; charset=utf-8", `src="/ui/assets/execution.js"`},
		{"/ui/assets/app.css", "text/css; charset=utf-8", ".graph"},
		{"/ui/assets/api.js", "text/javascript; charset=utf-8", "export async function stream"},
		{"/ui/assets/execution.js", "text/javascript; charset=utf-8", "/events"},
		{"/ui/assets/graph.js", "text/javascript; charset=utf-8", "requestAnimationFrame"},
		{"/ui/assets/detail.js", "text/javascript; charset=utf-8", "renderDetail"},
		{"/ui/assets/approval.js", "text/javascript; charset=utf-8", "renderApproval"},
		{"/ui/assets/list.js", "text/javascript; charset=utf-8", "/v1/executions?"},
		{"/ui/assets/cytoscape.esm.min.mjs", "text/javascript; charset=utf-8", "export{"},
		{"/ui/assets/dagre.esm.js", "text/javascript; charset=utf-8", "export{"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := s.do(http.MethodGet, tt.path, nil, "Authorization", "")
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			assert.Equal(t, tt.ctype, r.Header.Get("Content-Type"))
			assert.Equal(t, uiCSP, r.Header.Get("Content-Security-Policy"))
			assert.Contains(t, r.Header.Get("Content-Security-Policy"), "script-src 'self';")
			assert.NotContains(t, r.Header.Get("Content-Security-Policy"), "unsafe")
			assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
			assert.Equal(t, "DENY", r.Header.Get("X-Frame-Options"))
			assert.Contains(t, string(r.Body), tt.contains)
		})
	}

	// The data the pages show is not open.
	for _, p := range []string{"/v1/executions", "/v1/executions/x/graph", "/v1/executions/x/events", "/v1/executions/x/steps"} {
		s.do(http.MethodGet, p, nil, "Authorization", "").expect(t, http.StatusUnauthorized)
	}
	for _, p := range []string{"/v1/executions/x/decision", "/v1/executions/x/approve", "/v1/executions/x/reject"} {
		s.do(http.MethodPost, p, map[string]string{"action": "retry"}, "Authorization", "").expect(t, http.StatusUnauthorized)
	}
}

// TestUIUnknownPathsAre404 checks that nothing but the embedded pages and
// assets is served under /ui, whatever the path tries.
func TestUIUnknownPathsAre404(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withToken("s3cret"))
	for _, p := range []string{
		"/ui/nope", "/ui/assets/nope.js", "/ui/assets/", "/ui/assets/.hidden.js", "/ui/assets/..%2Fui.go",
		"/ui/assets/..%2F..%2Fui.go", "/ui/index.html", "/ui/assets/../index.html", "/ui/executions/",
		"/ui/executions/a/b", "/ui/vendor/README.md", "/ui/assets/%2e%2e%2fexecution.html",
	} {
		t.Run(p, func(t *testing.T) {
			r := s.do(http.MethodGet, p, nil, "Authorization", "")
			assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
			assert.NotContains(t, string(r.Body), "<html")
		})
	}
}

// TestUIRedirectsToItsList checks /ui without the slash.
func TestUIRedirectsToItsList(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withToken("s3cret"))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(s.URL + "/ui")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	assert.Equal(t, "/ui/", resp.Header.Get("Location"))
}

// TestUIPagesHaveNoInlineCode checks the pages keep to their CSP: every
// script is a file of this server and nothing is inline (scripts, styles,
// event handlers), so the policy can forbid all of it.
func TestUIPagesHaveNoInlineCode(t *testing.T) {
	script := regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	inline := regexp.MustCompile(`(?i)\s(style|on[a-z]+)\s*=|<style\b|javascript:`)
	pages, err := fs.Glob(uiFiles, "ui/*.html")
	require.NoError(t, err)
	require.Len(t, pages, 2)
	for _, p := range pages {
		data, err := fs.ReadFile(uiFiles, p)
		require.NoError(t, err)
		html := string(data)
		scripts := script.FindAllStringSubmatch(html, -1)
		require.NotEmpty(t, scripts, p)
		for _, m := range scripts {
			assert.Regexp(t, `src="/ui/assets/[a-z]+\.js"`, m[1], p)
			assert.Empty(t, strings.TrimSpace(m[2]), "%s has an inline script", p)
		}
		assert.False(t, inline.MatchString(html), "%s has inline style or handlers: %s", p, inline.FindString(html))
	}
}

// TestUIPageCallsArePlainBrowserRequests checks the browser protections let
// the page's own requests through: a same-origin decision POST (as fetch
// sends it, with Origin) reaches the handler, a foreign origin's does not.
func TestUIPageCallsArePlainBrowserRequests(t *testing.T) {
	s := newTestServer(t, sqliteURL(t), withToken("s3cret"))
	own := s.do(http.MethodPost, "/v1/executions/x/decision", map[string]string{"action": "retry"}, "Origin", s.URL)
	// No Temporal in this server: the request got past the browser
	// guard and the token to the handler, which answers 503.
	own.expect(t, http.StatusServiceUnavailable)
	s.do(http.MethodPost, "/v1/executions/x/decision", map[string]string{"action": "retry"}, "Origin", "http://evil.example").
		expect(t, http.StatusForbidden)
}
