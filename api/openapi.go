package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPI is the API's OpenAPI 3 document, served at GET /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte

func serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", OpenAPI)
}
