package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// maxStepsPage bounds ?limit= of GET /v1/executions/{id}/steps, as the
// progress query bounds its answers.
const maxStepsPage = 5000

// executionSteps answers one page of an execution's step states:
// ?offset= (default 0) and ?limit= (1 to 5,000; default as many as fit in
// about 1 MiB).
func (s *server) executionSteps(c echo.Context) error {
	id := c.Param("id")
	offset, limit := 0, 0
	var details []model.ErrorDetail
	if v := c.QueryParam("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			details = append(details, model.ErrorDetail{Path: "offset", Message: fmt.Sprintf("offset %q must be a non-negative integer", v)})
		}
		offset = n
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxStepsPage {
			details = append(details, model.ErrorDetail{Path: "limit", Message: fmt.Sprintf("limit %q must be between 1 and %d", v, maxStepsPage)})
		}
		limit = n
	}
	if len(details) > 0 {
		return &Error{Status: http.StatusBadRequest, Message: "invalid query", Details: details}
	}
	p, err := s.exec.Steps(c.Request().Context(), id, offset, limit)
	if err != nil {
		return s.executionError(err, id)
	}
	steps := p.Steps
	if steps == nil {
		steps = []model.StepProgress{}
	}
	return c.JSON(http.StatusOK, model.ExecutionSteps{Offset: p.Offset, Entries: p.Entries, Steps: steps})
}

// laterSteps calls fn with each page of an execution's step states after
// the first (the first page is what a describe shows: entries [0, from)),
// one page in memory at a time. It stops at the first error, or when a
// page comes back empty (the execution lists fewer entries than before).
func (s *server) laterSteps(ctx context.Context, id string, from, entries int, fn func([]model.StepProgress) error) error {
	for from < entries {
		p, err := s.exec.Steps(ctx, id, from, 0)
		if err != nil {
			return err
		}
		if len(p.Steps) == 0 {
			return nil
		}
		if err := fn(p.Steps); err != nil {
			return err
		}
		from += len(p.Steps)
		entries = p.Entries
	}
	return nil
}
