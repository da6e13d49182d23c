package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/kinds"
)

// KindList is the answer of GET /v1/kinds: every kind, then every Fuel
// task type, as `cairn kinds list -o json` prints them.
type KindList struct {
	Kinds []kinds.Description `json:"kinds"`
}

// listKinds documents the server's catalogue: the built-in kinds, the
// kinds of CAIRN_KINDS_DIR and the Fuel task types.
func (s *server) listKinds(c echo.Context) error {
	return c.JSON(http.StatusOK, KindList{Kinds: s.catalogue.DescribeAll()})
}

// getKind documents one kind or task type (Puppet's `puppet describe`);
// an unknown name is 404 with a did-you-mean.
func (s *server) getKind(c echo.Context) error {
	name := c.Param("name")
	d, ok := s.catalogue.Describe(name)
	if !ok {
		return newError(http.StatusNotFound, "%v", s.catalogue.DescribeError(name))
	}
	return c.JSON(http.StatusOK, d)
}
