package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

var executionKinds = []model.ExecutionKind{model.ExecApply, model.ExecDryRun, model.ExecGraph, model.ExecDestroy}

var executionStatuses = []model.ExecutionStatus{
	model.ExecRunning, model.ExecWaiting, model.ExecCompleted, model.ExecFailed, model.ExecRolledBack, model.ExecCanceled, model.ExecRejected,
}

var onFailures = []model.OnFailure{model.OnFailureRollback, model.OnFailureStop, model.OnFailureContinue, model.OnFailurePause}

var decisions = []model.Decision{model.DecisionRetry, model.DecisionSkip, model.DecisionRollback, model.DecisionAbort}

func joinQuoted[T ~string](vals []T) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// uiLink is the Temporal UI page of a run:
// {TemporalUIURL}/namespaces/{ns}/workflows/{workflowID}/{runID}.
func (s *server) uiLink(e *model.Execution) string {
	if s.cfg.TemporalUIURL == "" || e.WorkflowID == "" {
		return ""
	}
	ns := e.Namespace
	if ns == "" {
		ns = s.cfg.TemporalNamespace
	}
	link := strings.TrimRight(s.cfg.TemporalUIURL, "/") + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(e.WorkflowID)
	if e.RunID != "" {
		link += "/" + url.PathEscape(e.RunID)
	}
	return link
}

// present fills what the API adds to every execution it shows.
func (s *server) present(e *model.Execution) *model.Execution {
	if e == nil {
		return nil
	}
	if e.Steps == nil {
		e.Steps = []model.StepProgress{}
	}
	if link := s.uiLink(e); link != "" {
		e.UIURL = link
	}
	return e
}

// waitFor waits for the execution to finish, at most the configured wait
// timeout, lifting the write deadline for the time it takes. It returns
// the execution as last seen and whether it finished.
func (s *server) waitFor(c echo.Context, id string) (*model.Execution, bool, error) {
	ex, awaited, err := s.await(c, id)
	if err != nil {
		return nil, false, err
	}
	out := s.present(fromStarter(ex))
	return out, awaited && out.Finished(), nil
}

// await is waitFor in the starter's shape: the execution as last seen and
// whether the wait saw it end (false when the wait timeout expired first).
func (s *server) await(c echo.Context, id string) (*starter.Execution, bool, error) {
	extendWriteDeadline(c, s.cfg.WaitTimeout+time.Minute)
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.WaitTimeout)
	defer cancel()
	ex, err := s.exec.Await(ctx, id)
	if err != nil {
		if ctx.Err() != nil && c.Request().Context().Err() == nil {
			// Our own bound expired: answer with the execution as it is.
			ex, err := s.exec.Describe(c.Request().Context(), id)
			if err != nil {
				return nil, false, s.executionError(err, id)
			}
			return ex, false, nil
		}
		return nil, false, s.executionError(err, id)
	}
	return ex, true, nil
}

// extendWriteDeadline lets one long answer outlive the server's write
// timeout.
func extendWriteDeadline(c echo.Context, d time.Duration) {
	rc := http.NewResponseController(c.Response())
	_ = rc.SetWriteDeadline(time.Now().Add(d))
}

// answerStarted answers 202 with a started execution, or with wait=true
// 200 once it has finished (202 if it is still running at the bound).
func (s *server) answerStarted(c echo.Context, ex *model.Execution, wait bool) error {
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	if !wait {
		return c.JSON(http.StatusAccepted, s.present(ex))
	}
	done, finished, err := s.waitFor(c, ex.ID)
	if err != nil {
		return err
	}
	if !finished {
		return c.JSON(http.StatusAccepted, done)
	}
	return c.JSON(http.StatusOK, done)
}

func queryBool(c echo.Context, name string) (bool, error) {
	v := c.QueryParam(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("query parameter %s=%q is not a boolean", name, v)
	}
	return b, nil
}

// runOptions reads ?onFailure= and ?parallelism=.
func runOptions(c echo.Context) (model.OnFailure, int, error) {
	of := model.OnFailure(c.QueryParam("onFailure"))
	if of != "" && !slices.Contains(onFailures, of) {
		return "", 0, badRequest("onFailure %q is not one of %s", of, joinQuoted(onFailures))
	}
	par := 0
	if v := c.QueryParam("parallelism"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", 0, badRequest("parallelism %q must be a positive integer", v)
		}
		par = n
	}
	return of, par, nil
}

func (s *server) listExecutions(c echo.Context) error {
	f := starter.Filter{
		Stack:   c.QueryParam("stack"),
		Cluster: c.QueryParam("cluster"),
		Kind:    model.ExecutionKind(c.QueryParam("type")),
		Status:  model.ExecutionStatus(c.QueryParam("status")),
	}
	var details []model.ErrorDetail
	token, err := decodePageToken(c.QueryParam("pageToken"))
	if err != nil {
		details = append(details, model.ErrorDetail{Path: "pageToken", Message: "pageToken is not one this server gave"})
	}
	f.PageToken = token
	if f.Kind != "" && !slices.Contains(executionKinds, f.Kind) {
		details = append(details, model.ErrorDetail{Path: "type", Message: fmt.Sprintf("type %q is not one of %s", f.Kind, joinQuoted(executionKinds))})
	}
	if f.Status != "" && !slices.Contains(executionStatuses, f.Status) {
		details = append(details, model.ErrorDetail{Path: "status", Message: fmt.Sprintf("status %q is not one of %s", f.Status, joinQuoted(executionStatuses))})
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			details = append(details, model.ErrorDetail{Path: "limit", Message: fmt.Sprintf("limit %q must be between 1 and 1000", v)})
		}
		f.Limit = n
	}
	if len(details) > 0 {
		return &Error{Status: http.StatusBadRequest, Message: "invalid query", Details: details}
	}
	list, next, err := s.exec.List(c.Request().Context(), f)
	if err != nil {
		return s.executionError(err, "")
	}
	out := model.ExecutionList{Executions: make([]model.Execution, 0, len(list)), NextPageToken: encodePageToken(next)}
	visible, err := s.visibleExecutions(c)
	if err != nil {
		return err
	}
	for _, e := range list {
		if !visible(e) {
			continue
		}
		out.Executions = append(out.Executions, *s.present(fromStarter(e)))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) getExecution(c echo.Context) error {
	id := c.Param("id")
	ex, err := s.exec.Describe(c.Request().Context(), id)
	if err != nil {
		return s.executionError(err, id)
	}
	return c.JSON(http.StatusOK, s.present(fromStarter(ex)))
}

func (s *server) cancelExecution(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	if err := s.exec.Cancel(ctx, id); err != nil {
		return s.executionError(err, id)
	}
	ex, err := s.exec.Describe(ctx, id)
	if err != nil {
		return s.executionError(err, id)
	}
	return c.JSON(http.StatusAccepted, s.present(fromStarter(ex)))
}

func (s *server) retryExecution(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	orig, err := s.exec.Describe(ctx, id)
	if err != nil {
		return s.executionError(err, id)
	}
	if err := s.refuseRetryUnderFourEyes(c, orig.Kind, orig.StackID, orig.ClusterID); err != nil {
		return err
	}
	retry := s.exec.Retry
	if orig.Kind == model.ExecGraph {
		retry = s.exec.RetryGraph
	}
	ex, err := retry(ctx, id)
	if err != nil {
		return s.executionError(err, id)
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	return c.JSON(http.StatusAccepted, s.present(fromStarter(ex)))
}

func (s *server) decideExecution(c echo.Context) error {
	id := c.Param("id")
	var req model.DecisionRequest
	if err := decodeJSON(c, &req, false); err != nil {
		return err
	}
	if !slices.Contains(decisions, req.Action) {
		return &Error{Status: http.StatusBadRequest, Message: "invalid decision", Details: []model.ErrorDetail{{
			Document: "request", Path: "action",
			Message: fmt.Sprintf("action %q is not one of %s", req.Action, joinQuoted(decisions)),
		}}}
	}
	var field *model.DecisionFieldError
	if err := req.CheckTarget(); errors.As(err, &field) {
		return &Error{Status: http.StatusBadRequest, Message: "invalid decision", Details: []model.ErrorDetail{{
			Document: "request", Path: field.Field, Message: field.Message,
		}}}
	}
	// Who decided comes from the token alone.
	req.By = principal(c)
	res, err := s.exec.Decide(c.Request().Context(), id, req)
	if err != nil {
		return s.executionError(err, id)
	}
	return c.JSON(http.StatusOK, res)
}
