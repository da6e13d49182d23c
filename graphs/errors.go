package graphs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// Error is one problem of a document: where it is (source, document index,
// line and column), the field path inside the document ("spec.mode",
// "tasks[3].requires[0]") and what is wrong.
type Error struct {
	Pos     model.Position
	Path    string
	Message string
}

// Error renders "FILE:LINE:COL: PATH: message", leaving out the parts
// that are unknown.
func (e Error) Error() string {
	var b strings.Builder
	src := e.Pos.Source
	if src == "" {
		src = "<input>"
	}
	b.WriteString(src)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Pos.Line)
		if e.Pos.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Pos.Column)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// MarshalJSON renders the error the way the HTTP API reports details:
// {"document", "index", "path", "line", "column", "message"}.
func (e Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Document string `json:"document,omitempty"`
		Index    int    `json:"index"`
		Path     string `json:"path,omitempty"`
		Line     int    `json:"line,omitempty"`
		Column   int    `json:"column,omitempty"`
		Message  string `json:"message"`
	}{e.Pos.Source, e.Pos.Doc, e.Path, e.Pos.Line, e.Pos.Column, e.Message})
}

// Errors is every problem found in a set of documents, sorted by source,
// document, line and column.
type Errors []Error

// Error joins the errors one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Err returns es as an error, or nil when there are none.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Sort orders the errors by source, document index, line, column, path
// and message, and drops exact duplicates.
func (es Errors) Sort() Errors {
	slices.SortStableFunc(es, compareErrors)
	return slices.Compact(es)
}

func compareErrors(a, b Error) int {
	return cmp.Or(
		cmp.Compare(a.Pos.Source, b.Pos.Source),
		cmp.Compare(a.Pos.Doc, b.Pos.Doc),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Column, b.Pos.Column),
		cmp.Compare(a.Path, b.Path),
		cmp.Compare(a.Message, b.Message),
	)
}

// collector gathers errors, and warnings (problems Cairn accepts, such as
// the duplicate keys Fuel's loader took), while documents are read and
// checked.
type collector struct {
	errs  Errors
	warns Errors
}

// warn records a warning: the documents are still valid.
func (c *collector) warn(pos model.Position, path, format string, args ...any) {
	c.warns = append(c.warns, Error{Pos: pos, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *collector) add(pos model.Position, path, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	c.errs = append(c.errs, Error{Pos: pos, Path: path, Message: msg})
}
