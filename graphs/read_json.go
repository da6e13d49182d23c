package graphs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// readJSON decodes one JSON value (an object, or an array of objects) into
// YAML nodes that carry the line and column of each value, so JSON and
// YAML documents are checked by the same code. JSON is read strictly
// (no comments, no trailing commas); duplicate keys are errors.
func (r *reader) readJSON(name string, data []byte, format Format) []*document {
	jr := &jsonReader{data: data, maxDepth: r.lim.maxDepth, budget: r.lim.maxNodes, positions: format != FormatJsonnet}
	jr.dec = json.NewDecoder(bytes.NewReader(data))
	jr.dec.UseNumber()
	root, err := jr.value(1)
	if err == nil {
		off := jr.skipSpace(jr.dec.InputOffset())
		if _, terr := jr.dec.Token(); !errors.Is(terr, io.EOF) {
			err = &jsonError{offset: off, msg: "unexpected data after the JSON value"}
		}
	}
	if err != nil {
		what := "invalid JSON"
		if format == FormatJsonnet {
			what = "Jsonnet evaluated to invalid JSON"
		}
		pos := model.Position{Source: name}
		var je *jsonError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &je):
			if je.limit {
				what = "document refused"
			}
			if jr.positions {
				pos.Line, pos.Column = jr.lineCol(je.offset)
			}
			r.c.add(pos, "", "%s: %s", what, je.msg)
		case errors.As(err, &se):
			if jr.positions {
				pos.Line, pos.Column = jr.lineCol(jr.syntaxErrorOffset(se))
			}
			r.c.add(pos, "", "%s: %s", what, se.Error())
		default:
			if jr.positions {
				pos.Line, pos.Column = jr.lineCol(int64(len(data)))
			}
			msg := err.Error()
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				msg = "unexpected end of input"
			}
			r.c.add(pos, "", "%s: %s", what, msg)
		}
		return nil
	}
	for _, pr := range jr.problems {
		pos := model.Position{Source: name}
		if jr.positions {
			pos.Line, pos.Column = jr.lineCol(pr.offset)
		}
		r.c.add(pos, "", "%s", pr.msg)
	}
	var docs []*document
	for i, u := range units(root) {
		docs = append(docs, &document{source: name, index: i, root: u, format: format})
	}
	return docs
}

// jsonError is a problem the reader found itself, at a byte offset.
type jsonError struct {
	offset int64
	msg    string
	limit  bool
}

func (e *jsonError) Error() string { return e.msg }

type jsonReader struct {
	data       []byte
	dec        *json.Decoder
	maxDepth   int
	budget     int
	positions  bool
	lineStarts []int
	problems   []jsonError // found while reading, not fatal
	// cursor: positions are asked for in increasing order while reading,
	// so each is found by advancing from the last (linear in total, even
	// for a document on one long line).
	curOff, curLine, curCol int
}

// value reads one value whose first token is next in the stream.
func (jr *jsonReader) value(depth int) (*yaml.Node, error) {
	start := jr.skipSpace(jr.dec.InputOffset())
	tok, err := jr.dec.Token()
	if err != nil {
		return nil, err
	}
	jr.budget--
	if jr.budget < 0 {
		return nil, &jsonError{offset: start, msg: "document has too many values", limit: true}
	}
	n := &yaml.Node{}
	if jr.positions {
		n.Line, n.Column = jr.lineCol(start)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > jr.maxDepth {
			return nil, &jsonError{offset: start, msg: fmt.Sprintf("values are nested more than %d levels deep", jr.maxDepth), limit: true}
		}
		switch t {
		case '{':
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
			var keys map[string]*yaml.Node
			for jr.dec.More() {
				kstart := jr.skipSpace(jr.dec.InputOffset())
				ktok, err := jr.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := ktok.(string)
				if !ok {
					return nil, &jsonError{offset: kstart, msg: "object keys must be strings"}
				}
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: key, Style: yaml.DoubleQuotedStyle}
				if jr.positions {
					k.Line, k.Column = jr.lineCol(kstart)
				}
				if keys == nil {
					keys = map[string]*yaml.Node{}
				}
				first, dup := keys[key]
				if !dup {
					keys[key] = k
				}
				v, err := jr.value(depth + 1)
				if err != nil {
					return nil, err
				}
				if dup {
					// Reported like YAML's: the first value is kept.
					msg := fmt.Sprintf("duplicate key %q", key)
					if first.Line > 0 {
						msg += fmt.Sprintf(" (first at line %d)", first.Line)
					}
					jr.problems = append(jr.problems, jsonError{offset: kstart, msg: msg})
					continue
				}
				n.Content = append(n.Content, k, v)
			}
			if _, err := jr.dec.Token(); err != nil { // '}'
				return nil, err
			}
		case '[':
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
			for jr.dec.More() {
				v, err := jr.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if _, err := jr.dec.Token(); err != nil { // ']'
				return nil, err
			}
		default:
			return nil, &jsonError{offset: start, msg: fmt.Sprintf("unexpected %q", rune(t))}
		}
	case string:
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, strTag, t, yaml.DoubleQuotedStyle
	case json.Number:
		n.Kind, n.Value = yaml.ScalarNode, t.String()
		n.Tag = intTag
		if strings.ContainsAny(n.Value, ".eE") {
			n.Tag = floatTag
		}
	case bool:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, boolTag, "false"
		if t {
			n.Value = "true"
		}
	case nil:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, nullTag, "null"
	default:
		return nil, &jsonError{offset: start, msg: fmt.Sprintf("unexpected token %v", tok)}
	}
	return n, nil
}

var invalidCharRE = regexp.MustCompile(`^invalid character '(.+?)'`)

// syntaxErrorOffset finds the character a decoder syntax error is about:
// the decoder's offset may point just before or after it.
func (jr *jsonReader) syntaxErrorOffset(se *json.SyntaxError) int64 {
	off := se.Offset
	m := invalidCharRE.FindStringSubmatch(se.Error())
	if m == nil {
		return off
	}
	c, _, _, err := strconv.UnquoteChar(m[1], '\'')
	if err != nil || c >= utf8.RuneSelf {
		return off
	}
	start := off
	if start == 1 {
		start = 0 // the very first character
	}
	for i := start; i < int64(len(jr.data)) && i < off+64; i++ {
		if jr.data[i] == byte(c) {
			return i
		}
	}
	return off
}

// skipSpace returns the offset of the next token at or after off: the
// decoder's offset points before separators and white space.
func (jr *jsonReader) skipSpace(off int64) int64 {
	for off < int64(len(jr.data)) {
		switch jr.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// lineCol converts a byte offset into a 1-based line and column (in
// characters, as YAML positions are).
func (jr *jsonReader) lineCol(off int64) (int, int) {
	o := int(min(max(off, 0), int64(len(jr.data))))
	if jr.curLine == 0 {
		jr.curLine, jr.curCol = 1, 1
	}
	if o >= jr.curOff {
		for i := jr.curOff; i < o; i++ {
			switch b := jr.data[i]; {
			case b == '\n':
				jr.curLine, jr.curCol = jr.curLine+1, 1
			case !utf8.RuneStart(b):
			default:
				jr.curCol++
			}
		}
		jr.curOff = o
		return jr.curLine, jr.curCol
	}
	if jr.lineStarts == nil {
		jr.lineStarts = []int{0}
		for i, b := range jr.data {
			if b == '\n' {
				jr.lineStarts = append(jr.lineStarts, i+1)
			}
		}
	}
	line := sort.Search(len(jr.lineStarts), func(i int) bool { return jr.lineStarts[i] > o }) - 1
	return line + 1, utf8.RuneCount(jr.data[jr.lineStarts[line]:o]) + 1
}

// jsonValid reports whether data is one valid JSON value.
func jsonValid(data []byte) bool { return json.Valid(data) }
