package api

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// UIPrefix is where the live pages are served: /ui/ lists executions,
// /ui/executions/{id} draws one as a graph, /ui/assets/{file} are their
// scripts and styles.
const UIPrefix = "/ui/"

// The pages are a static shell: they carry no data, so they are served
// without the token; every data call they make goes to /v1 with the token
// the user enters, like any other client.
//
//go:embed ui/index.html ui/execution.html ui/assets
var uiFiles embed.FS

// uiCSP allows the pages nothing but this server: no inline scripts or
// styles, no other origin to load from or talk to, no framing.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// uiTypes are the content types of the assets, by extension; an asset of
// another extension is not served.
var uiTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// registerUI adds the live pages' routes.
func registerUI(e *echo.Echo) {
	e.Add(http.MethodGet, "/ui", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, UIPrefix)
	})
	e.Add(http.MethodGet, UIPrefix, serveUIFile("ui/index.html"))
	execPage := serveUIFile("ui/execution.html")
	e.Add(http.MethodGet, UIPrefix+"executions/:id", func(c echo.Context) error {
		// Execution ids have no slash; echo would match a longer path.
		if strings.Contains(strings.TrimPrefix(c.Request().URL.Path, UIPrefix+"executions/"), "/") {
			return newError(http.StatusNotFound, "no such page")
		}
		return execPage(c)
	})
	e.Add(http.MethodGet, UIPrefix+"assets/:file", func(c echo.Context) error {
		name := c.Param("file")
		if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			return newError(http.StatusNotFound, "no such asset")
		}
		return serveUIFile("ui/assets/" + name)(c)
	})
}

// serveUIFile answers one embedded file with its type and the pages'
// security headers; 404 when it does not exist or has no known type.
func serveUIFile(name string) echo.HandlerFunc {
	return func(c echo.Context) error {
		typ, ok := uiTypes[path.Ext(name)]
		if !ok {
			return newError(http.StatusNotFound, "no such asset")
		}
		data, err := fs.ReadFile(uiFiles, name)
		if err != nil {
			return newError(http.StatusNotFound, "no such asset")
		}
		h := c.Response().Header()
		h.Set("Content-Security-Policy", uiCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, typ, data)
	}
}

// uiPath reports whether a request is for the live pages, which need no
// token.
func uiPath(p string) bool {
	return p == "/ui" || strings.HasPrefix(p, UIPrefix)
}
