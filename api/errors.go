package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Error codes of the error shape. Each status has one code, so clients can
// switch on either.
const (
	CodeBadRequest           = "bad_request"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeMisdirected          = "misdirected_request"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeNotAcceptable        = "not_acceptable"
	CodeConflict             = "conflict"
	CodeGone                 = "gone"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeInvalid              = "invalid"
	CodeTooManyRequests      = "too_many_requests"
	CodeInternal             = "internal"
	CodeUnavailable          = "unavailable"
)

var statusCodes = map[int]string{
	http.StatusBadRequest:            CodeBadRequest,
	http.StatusUnauthorized:          CodeUnauthorized,
	http.StatusForbidden:             CodeForbidden,
	http.StatusMisdirectedRequest:    CodeMisdirected,
	http.StatusNotFound:              CodeNotFound,
	http.StatusMethodNotAllowed:      CodeMethodNotAllowed,
	http.StatusNotAcceptable:         CodeNotAcceptable,
	http.StatusConflict:              CodeConflict,
	http.StatusGone:                  CodeGone,
	http.StatusRequestEntityTooLarge: CodePayloadTooLarge,
	http.StatusUnsupportedMediaType:  CodeUnsupportedMediaType,
	http.StatusUnprocessableEntity:   CodeInvalid,
	http.StatusTooManyRequests:       CodeTooManyRequests,
	http.StatusInternalServerError:   CodeInternal,
	http.StatusServiceUnavailable:    CodeUnavailable,
}

// codeFor returns the error code of an HTTP status.
func codeFor(status int) string {
	if c, ok := statusCodes[status]; ok {
		return c
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeBadRequest
}

// Error is an answer the handlers give instead of a result. Extra fields are
// merged into the top level of the body next to "error" (a dry-run's plan
// next to its errors, the running execution next to a conflict).
type Error struct {
	Status  int
	Message string
	Details []model.ErrorDetail
	Extra   map[string]any
	// Cause is logged, never sent.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Message, e.Cause)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

func newError(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, format, args...)
}

func notFound(format string, args ...any) *Error {
	return newError(http.StatusNotFound, format, args...)
}

func conflict(format string, args ...any) *Error {
	return newError(http.StatusConflict, format, args...)
}

func invalid(message string, details []model.ErrorDetail) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Message: message, Details: details}
}

// detailAt builds a detail from a model position.
func detailAt(pos model.Position, path, message string) model.ErrorDetail {
	return model.ErrorDetail{Document: pos.Source, Index: pos.Doc, Path: path, Line: pos.Line, Column: pos.Column, Message: message}
}

// storeError maps a store failure: not found → 404, conflict → 409, anything
// else → 500 (with the cause kept for the log).
func storeError(err error, what string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: what + " not found", Cause: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Message: what + " already exists", Cause: err}
	default:
		return &Error{Status: http.StatusInternalServerError, Message: "internal error", Cause: fmt.Errorf("%s: %w", what, err)}
	}
}

// internalError hides the cause from the client and keeps it for the log.
func internalError(err error) *Error {
	return &Error{Status: http.StatusInternalServerError, Message: "internal error", Cause: err}
}

// toError turns anything a handler or echo returned into an *Error.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if s, ok := he.Message.(string); ok && s != "" {
			msg = s
		}
		switch he.Code {
		case http.StatusNotFound:
			msg = "no such route"
		case http.StatusMethodNotAllowed:
			msg = "method not allowed on this route"
		case http.StatusRequestEntityTooLarge:
			msg = "request body too large"
		}
		if he.Code >= 500 {
			return &Error{Status: he.Code, Message: "internal error", Cause: err}
		}
		return &Error{Status: he.Code, Message: msg, Cause: he.Internal}
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit)}
	}
	return internalError(err)
}

// errorHandler writes every error in the error shape and logs server-side
// failures with their cause.
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		e := toError(err)
		if e.Status >= 500 {
			// The route's template, not its path: it names what failed
			// without an id or a query.
			requestLogger(c, logger).Error("request failed", "method", c.Request().Method, "route", c.Path(),
				"status", e.Status, "error", e.Cause)
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(e.Status)
			return
		}
		if e.Status == http.StatusUnauthorized {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
		}
		_ = writeErrorBody(c, e)
	}
}

func writeErrorBody(c echo.Context, e *Error) error {
	details := e.Details
	if details == nil {
		details = []model.ErrorDetail{}
	}
	info := model.ErrorInfo{Code: codeFor(e.Status), Message: e.Message, Details: details}
	if len(e.Extra) == 0 {
		return c.JSON(e.Status, model.ErrorBody{Error: info})
	}
	body := make(map[string]any, len(e.Extra)+1)
	for k, v := range e.Extra {
		body[k] = v
	}
	body["error"] = info
	return c.JSON(e.Status, body)
}
