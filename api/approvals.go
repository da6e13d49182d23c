package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// maxApprovalTimeout bounds ?approvalTimeout=.
const maxApprovalTimeout = 366 * 24 * time.Hour

// ApprovalRequest is the optional body of POST
// /v1/executions/{id}/approve and /reject.
type ApprovalRequest struct {
	Comment string `json:"comment,omitempty"`
	// By is ignored: who approves comes from the request's token alone.
	By string `json:"by,omitempty"`
}

// approvalParam reads ?approve=required and ?approvalTimeout= of an
// apply: nil without approval.
func approvalParam(c echo.Context) (*contract.ApprovalSettings, error) {
	approve, timeout := c.QueryParam("approve"), c.QueryParam("approvalTimeout")
	switch approve {
	case "":
		if timeout != "" {
			return nil, badRequest("approvalTimeout needs approve=required")
		}
		return nil, nil
	case "required":
	default:
		return nil, badRequest("approve %q: the only value is \"required\"", approve)
	}
	set := &contract.ApprovalSettings{}
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 || d > maxApprovalTimeout {
			return nil, badRequest("approvalTimeout %q: want a positive duration up to %s, such as 72h", timeout, maxApprovalTimeout)
		}
		set.Timeout = d
	}
	return set, nil
}

// answerAwaiting answers a started plan awaiting approval: 202 with the
// execution once its plan is made and it awaits approval (or it ended),
// polling at most the wait timeout.
func (s *server) answerAwaiting(c echo.Context, ex *model.Execution) error {
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	extendWriteDeadline(c, s.cfg.WaitTimeout+time.Minute)
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.WaitTimeout)
	defer cancel()
	tick := time.NewTicker(s.cfg.EventsPollInterval)
	defer tick.Stop()
	for {
		got, err := s.exec.Describe(c.Request().Context(), ex.ID)
		if err != nil {
			return s.executionError(err, ex.ID)
		}
		ex = s.present(fromStarter(got))
		if ex.Awaiting != "" || ex.Finished() {
			return c.JSON(http.StatusAccepted, ex)
		}
		select {
		case <-ctx.Done():
			return c.JSON(http.StatusAccepted, ex)
		case <-tick.C:
		}
	}
}

// approveExecution approves a plan awaiting approval: 200 with the
// approval (naming the apply it started) once the plan was found to hold,
// 409 naming what moved when it no longer does (the plan then ended).
func (s *server) approveExecution(c echo.Context) error { return s.answerApproval(c, true) }

// rejectExecution rejects a plan awaiting approval; it ends, having
// changed nothing.
func (s *server) rejectExecution(c echo.Context) error { return s.answerApproval(c, false) }

func (s *server) answerApproval(c echo.Context, approve bool) error {
	id := c.Param("id")
	var req ApprovalRequest
	if err := decodeJSON(c, &req, true); err != nil {
		return err
	}
	// The API waits for the check (a dry-run's reads) past the write
	// timeout.
	extendWriteDeadline(c, s.cfg.WaitTimeout+time.Minute)
	res, err := s.exec.Approve(c.Request().Context(), id, model.ApprovalRequest{
		Approve: approve, Comment: req.Comment, By: principal(c),
	})
	var moved *starter.PlanMovedError
	switch {
	case errors.As(err, &moved):
		return &Error{Status: http.StatusConflict, Message: moved.Error(), Cause: err, Extra: map[string]any{
			"movedBy": moved.Moved.MovedBy, "moved": moved.Moved.Moved, "movedCount": moved.Moved.MovedCount,
		}}
	case errors.Is(err, starter.ErrNotAwaiting):
		return &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err}
	case errors.Is(err, starter.ErrApproverNotAllowed):
		return &Error{Status: http.StatusForbidden, Message: err.Error(), Cause: err}
	case errors.Is(err, starter.ErrInvalidApproval):
		return &Error{Status: http.StatusBadRequest, Message: err.Error(), Cause: err}
	case err != nil:
		return s.executionError(err, id)
	}
	return c.JSON(http.StatusOK, res)
}
