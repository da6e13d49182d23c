package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// ExecutionGraph is the body of GET /v1/executions/{id}/graph: every step
// of the execution, in package order, with the steps it waits for.
type ExecutionGraph struct {
	Steps []model.StepDeps `json:"steps"`
}

// executionGraph answers an execution's step graph; 404 when the
// execution is unknown or has not prepared its plan yet.
func (s *server) executionGraph(c echo.Context) error {
	id := c.Param("id")
	steps, err := s.exec.Graph(c.Request().Context(), id)
	if err != nil {
		return s.executionError(err, id)
	}
	return c.JSON(http.StatusOK, ExecutionGraph{Steps: steps})
}
