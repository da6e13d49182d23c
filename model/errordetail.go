package model

import (
	"fmt"
	"strings"
)

// ErrorDetail is one problem found in a request, positioned in the document
// it came from when there is one: an entry of the "details" of every error
// answer of the HTTP API. Line and Column are 1-based; 0 means unknown.
// Index is the document's index inside a multi-document source.
type ErrorDetail struct {
	Document string `json:"document"`
	Index    int    `json:"index"`
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Message  string `json:"message"`
}

// String renders a detail as "document:line:column: path: message".
func (d ErrorDetail) String() string {
	var b strings.Builder
	if d.Document != "" {
		b.WriteString(d.Document)
		if d.Index > 0 {
			fmt.Fprintf(&b, "[%d]", d.Index)
		}
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", d.Line, d.Column)
		}
		b.WriteString(": ")
	}
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}
