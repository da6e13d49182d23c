package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// maxStepsPage bounds ?limit= of GET /v1/executions/{id}/steps, as the
// progress query bounds its answers.
const maxStepsPage = 5000

// executionSteps answers one page of an execution's step states:
// ?offset= (default 0) and ?limit= (1 to 5,000; default as many as fit in
// about 256 KiB). With ?since= (a cursor of an earlier answer, empty for
// the first) it answers the states of the steps that changed after it
// instead, with the cursor to ask from next (see model.ExecutionSteps).
func (s *server) executionSteps(c echo.Context) error {
	id := c.Param("id")
	offset, limit := 0, 0
	var details []model.ErrorDetail
	_, since := c.QueryParams()["since"]
	if since && c.QueryParam("offset") != "" {
		details = append(details, model.ErrorDetail{Path: "offset", Message: "offset pages and since follows: ask one or the other"})
	}
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
	var p *model.ProgressPage
	var err error
	if since {
		p, err = s.exec.StepsSince(c.Request().Context(), id, c.QueryParam("since"), limit)
		if errors.Is(err, starter.ErrBadCursor) {
			return &Error{Status: http.StatusBadRequest, Message: "invalid query", Cause: err,
				Details: []model.ErrorDetail{{Path: "since", Message: err.Error() + "; start again with since= (empty)"}}}
		}
	} else {
		p, err = s.exec.Steps(c.Request().Context(), id, offset, limit)
	}
	if err != nil {
		return s.executionError(err, id)
	}
	steps := p.Steps
	if steps == nil {
		steps = []model.StepProgress{}
	}
	out := model.ExecutionSteps{Offset: p.Offset, Entries: p.Entries, Steps: steps,
		Status: p.Status, Total: p.Total, Done: p.Done, Waiting: p.Waiting}
	if since {
		out.Offset, out.Entries = 0, 0
		out.Cursor, out.More, out.Reset = p.Cursor, p.More, p.Reset
	}
	return c.JSON(http.StatusOK, out)
}
