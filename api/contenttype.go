package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// bodyTypeAccepted reports whether a media type (lower case, without
// parameters) is one the API reads: JSON (and +json), YAML or Jsonnet.
func bodyTypeAccepted(mt string) bool {
	_, ok := documentTypes[mt]
	return ok || strings.HasSuffix(mt, "+json")
}

// requireBodyType refuses, with 415, a request body whose Content-Type is
// missing or not JSON, YAML or Jsonnet. The types a browser may send to
// another origin without asking first (text/plain, forms, none at all) are
// so never read, whatever the route. Requests without a body pass.
func requireBodyType() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody {
				return next(c)
			}
			mt, err := mediaType(c)
			if err != nil {
				return err
			}
			if !bodyTypeAccepted(mt) {
				shown := mt
				if shown == "" {
					shown = "none"
				}
				return newError(http.StatusUnsupportedMediaType,
					"Content-Type %s is not accepted: send application/json, application/yaml or application/jsonnet", shown)
			}
			return next(c)
		}
	}
}
