package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// executionGraph answers an execution's step graph; 404 when the
// execution is unknown or has not prepared its plan yet.
func (s *server) executionGraph(c echo.Context) error {
	id := c.Param("id")
	steps, err := s.exec.Graph(c.Request().Context(), id)
	if err != nil {
		return s.executionError(err, id)
	}
	return c.JSON(http.StatusOK, model.ExecutionGraph{Steps: steps})
}
