package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// CodecPrefix is where the Temporal UI's codec endpoint is served:
// POST /codec/encode and /codec/decode.
const CodecPrefix = "/codec/"

// corsMaxAge is how long a browser may cache a preflight's answer.
const corsMaxAge = 600

// browserPolicy decides what a browser may do. Browsers are the one client
// that a third party can steer: a page on another origin can post simple
// requests to any address (CSRF), and a domain rebound to 127.0.0.1 makes
// the browser treat this server as the attacker's own (DNS rebinding).
type browserPolicy struct {
	// loopbackOnly refuses every Host but loopback names: set when the API
	// has no token, so that a rebound domain cannot reach it.
	loopbackOnly bool
	// api are the origins allowed to call the API from a browser;
	// codec those allowed to call the codec endpoint (the Temporal UI).
	api   map[origin]bool
	codec map[origin]bool
}

// allowed reports whether a browser page of o may send state-changing
// requests to path, and whether it gets CORS headers for it (cross
// origins configured for it do; the server's own origin needs none).
func (p *browserPolicy) allowed(o origin, path, requestHost string) (ok, cors bool) {
	if p.api[o] || (strings.HasPrefix(path, CodecPrefix) && p.codec[o]) {
		return true, true
	}
	return sameOrigin(o, requestHost), false
}

// guardBrowsers applies the policy before authentication:
//   - without a token, a Host that is not loopback gets 421;
//   - a CORS preflight from an allowed origin gets 204 with the CORS
//     headers (preflights carry no token), from any other origin 403;
//   - a state-changing request (any method but GET, HEAD and OPTIONS)
//     whose Origin is neither the server's own nor allowed gets 403;
//     requests without Origin (the CLI, curl, agents) pass;
//   - answers to allowed cross origins carry Access-Control-Allow-Origin.
func guardBrowsers(p *browserPolicy) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if p.loopbackOnly && !loopbackHost(req.Host) {
				return newError(http.StatusMisdirectedRequest,
					"host %q is not served: without an API token the server answers only loopback hosts (127.0.0.1, ::1, localhost)", req.Host)
			}
			header := req.Header.Get(echo.HeaderOrigin)
			if header == "" {
				return next(c)
			}
			codecPath := strings.HasPrefix(req.URL.Path, CodecPrefix)
			o, err := parseOrigin(header)
			ok, cors := false, false
			if err == nil {
				ok, cors = p.allowed(o, req.URL.Path, req.Host)
			}
			res := c.Response().Header()
			res.Add(echo.HeaderVary, echo.HeaderOrigin)
			if cors {
				res.Set(echo.HeaderAccessControlAllowOrigin, o.String())
				res.Set(echo.HeaderAccessControlExposeHeaders, RequestIDHeader)
				if codecPath {
					// The UI's "include cross-origin credentials" setting
					// needs this; Cairn reads no cookies.
					res.Set(echo.HeaderAccessControlAllowCredentials, "true")
				}
			}
			if req.Method == http.MethodOptions && req.Header.Get(echo.HeaderAccessControlRequestMethod) != "" {
				if !cors {
					return newError(http.StatusForbidden, "origin %q may not call this server from a browser (see CAIRN_ALLOWED_ORIGINS)", header)
				}
				methods := "GET, POST, PUT, DELETE"
				if codecPath {
					methods = "POST"
				}
				res.Set(echo.HeaderAccessControlAllowMethods, methods)
				res.Set(echo.HeaderAccessControlAllowHeaders, "Authorization, Content-Type, X-Namespace, Last-Event-ID, "+RequestIDHeader)
				res.Set(echo.HeaderAccessControlMaxAge, strconv.Itoa(corsMaxAge))
				return c.NoContent(http.StatusNoContent)
			}
			if !ok && changesState(req.Method) {
				return newError(http.StatusForbidden, "origin %q may not change anything on this server (see CAIRN_ALLOWED_ORIGINS)", header)
			}
			return next(c)
		}
	}
}

// changesState reports whether a method may change state: everything but
// the safe methods.
func changesState(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}
