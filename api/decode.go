package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// readBody reads the whole request body, mapping the body limit to 413.
func readBody(c echo.Context) ([]byte, error) {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit)}
		}
		return nil, badRequest("reading the request body: %v", err)
	}
	return data, nil
}

// mediaType returns the request's media type, lower case, without
// parameters; "" when absent.
func mediaType(c echo.Context) (string, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct == "" {
		return "", nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", newError(http.StatusUnsupportedMediaType, "unreadable Content-Type %q", ct)
	}
	return strings.ToLower(mt), nil
}

// decodeJSON reads a JSON request body into v, refusing unknown fields and
// trailing data, with the line and column of a syntax or type error. An
// empty body is allowed when allowEmpty (v keeps its zero value).
func decodeJSON(c echo.Context, v any, allowEmpty bool) error {
	mt, err := mediaType(c)
	if err != nil {
		return err
	}
	if mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return newError(http.StatusUnsupportedMediaType, "Content-Type %q is not accepted here; send application/json", mt)
	}
	data, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if allowEmpty {
			return nil
		}
		return badRequest("empty request body; send a JSON object")
	}
	return unmarshalStrict(data, v)
}

// unmarshalStrict decodes one JSON value, reporting positions.
func unmarshalStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(data, err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := lineColumn(data, dec.InputOffset())
		return &Error{Status: http.StatusBadRequest, Message: "malformed JSON body",
			Details: []model.ErrorDetail{{Document: "request", Line: line, Column: col, Message: "unexpected data after the JSON value"}}}
	}
	return nil
}

// jsonError turns a decoding error into a 400 with its position.
func jsonError(data []byte, err error, offset int64) error {
	detail := model.ErrorDetail{Document: "request", Message: err.Error()}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		detail.Line, detail.Column = lineColumn(data, syntax.Offset)
		detail.Message = syntax.Error()
	case errors.As(err, &typ):
		detail.Line, detail.Column = lineColumn(data, typ.Offset)
		detail.Path = typ.Field
		detail.Message = fmt.Sprintf("expected %s, got JSON %s", typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		detail.Line, detail.Column = lineColumn(data, int64(len(data)))
		detail.Message = "unexpected end of JSON"
	default:
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			detail.Path = strings.Trim(field, `"`)
			detail.Message = "unknown field " + field
		}
		detail.Line, detail.Column = lineColumn(data, offset)
	}
	return &Error{Status: http.StatusBadRequest, Message: "malformed JSON body", Details: []model.ErrorDetail{detail}}
}

// lineColumn converts a byte offset to a 1-based line and column.
func lineColumn(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// validID accepts URL-safe ids: letters, digits, '-', '_', '.', at most 128,
// and not "." or "..".
func validID(id string) bool {
	return plainID(id, 128) && id != "." && id != ".."
}

// plainID reports whether id is 1 to maxLen letters, digits, '-', '_' and
// '.'.
func plainID(id string, maxLen int) bool {
	if id == "" || len(id) > maxLen {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}
