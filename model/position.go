package model

import "fmt"

// Position says where a value came from: the source (file name or URL), the
// index of the document inside it (0-based, for multi-document YAML or JSON
// arrays), and the 1-based line and column. Line 0 means unknown.
type Position struct {
	Source string `json:"document,omitempty" yaml:"document,omitempty"`
	Doc    int    `json:"index,omitempty" yaml:"index,omitempty"`
	Line   int    `json:"line,omitempty" yaml:"line,omitempty"`
	Column int    `json:"column,omitempty" yaml:"column,omitempty"`
}

func (p Position) String() string {
	src := p.Source
	if src == "" {
		src = "<input>"
	}
	if p.Line == 0 {
		return src
	}
	return fmt.Sprintf("%s:%d:%d", src, p.Line, p.Column)
}
