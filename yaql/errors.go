package yaql

import (
	"fmt"
	"strings"
)

// Error is a problem of an expression at a place in its source: Offset is
// the byte offset, Line and Column (1-based, columns in characters) where
// that is inside a multi-line expression.
type Error struct {
	Offset int
	Line   int
	Column int
	Msg    string
}

// Error renders "line L, column C: msg".
func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// errorAt builds an Error at an offset of src.
func errorAt(src string, off int, format string, args ...any) *Error {
	off = min(max(off, 0), len(src))
	line, col := 1, 1
	for _, r := range src[:off] {
		if r == '\n' {
			line, col = line+1, 1
			continue
		}
		col++
	}
	return &Error{Offset: off, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// quoteSnippet shortens a piece of source for a message.
func quoteSnippet(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}
