package graphs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// readJSON decodes one JSON value (an object, or an array of objects) into
// YAML nodes that carry the line and column of each value, so JSON and
// YAML documents are checked by the same code. JSON is read strictly, as
// encoding/json reads it (no comments, no trailing commas); a duplicate
// key is reported and its first value kept. An array of documents is read
// element by element, each handed to emit before the next is read and
// each with the whole node budget: the limits are per document.
func (r *reader) readJSON(at origin, data []byte, format Format, emit func(*document)) {
	jr := &jsonReader{data: data, maxDepth: r.lim.maxDepth, budget: r.lim.maxNodes, positions: format != FormatJsonnet, lineOffset: at.line}
	fail := func(err *jsonError, doc int) {
		what := "invalid JSON"
		switch {
		case err.limit:
			what = "document refused"
		case format == FormatJsonnet:
			what = "Jsonnet evaluated to invalid JSON"
		}
		r.c.add(jr.pos(at, doc, err.offset), "", "%s: %s", what, err.msg)
	}
	problems := func(doc int) {
		for _, pr := range jr.problems {
			r.c.add(jr.pos(at, doc, pr.offset), "", "%s", pr.msg)
		}
		jr.problems = jr.problems[:0]
	}
	jr.skipSpace()
	if jr.i < len(data) && data[jr.i] == '[' {
		r.readJSONArray(jr, at, format, emit, fail, problems)
		return
	}
	root, err := jr.document()
	if err != nil {
		fail(err, 0)
		return
	}
	problems(0)
	for i, u := range units(root) {
		emit(&document{source: at.name, index: at.doc + i, root: u, format: format})
	}
}

// readJSONArray reads a top-level array. Its elements are held while none
// is a document (a bare list of tasks is one document); from the first
// that is (see units), those held and every later one are documents,
// emitted one by one.
func (r *reader) readJSONArray(jr *jsonReader, at origin, format Format, emit func(*document), fail func(*jsonError, int), problems func(int)) {
	seq, err := jr.node(yaml.SequenceNode, "!!seq", jr.i)
	if err != nil {
		fail(err, 0)
		return
	}
	documents := false
	var held []*yaml.Node
	index := 0
	send := func(n *yaml.Node) {
		emit(&document{source: at.name, index: at.doc + index, root: n, format: format})
		index++
	}
	if !jr.open(']') {
		for {
			if documents {
				jr.budget = r.lim.maxNodes
			}
			v, err := jr.value(2)
			if err != nil {
				fail(err, index+len(held))
				return
			}
			problems(index + len(held))
			switch {
			case documents:
				send(v)
			case isDocumentNode(v):
				documents = true
				for _, h := range held {
					send(h)
				}
				held = nil
				send(v)
			default:
				held = append(held, v)
			}
			done, err := jr.next(']', "after array element")
			if err != nil {
				fail(err, index+len(held))
				return
			}
			if done {
				break
			}
		}
	}
	jr.skipSpace()
	if jr.i < len(jr.data) {
		fail(&jsonError{offset: jr.i, msg: "unexpected data after the JSON value"}, index)
		return
	}
	if !documents {
		// A bare list of tasks: one document.
		seq.Content = held
		send(seq)
	}
}

// isDocumentNode reports whether an element of a top-level list is a
// document rather than a task (see units).
func isDocumentNode(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode && (mapGet(n, "kind") != nil || mapGet(n, "apiVersion") != nil || mapGet(n, "metadata") != nil)
}

// pos is the position of a byte offset of the reader's data, in a
// document of the source at.
func (jr *jsonReader) pos(at origin, doc, offset int) model.Position {
	if !jr.positions {
		return at.pos(doc, 0, 0)
	}
	line, col := jr.lineCol(offset)
	return at.pos(doc, line, col)
}

// jsonError is a problem at a byte offset.
type jsonError struct {
	offset int
	msg    string
	limit  bool // a limit refused the document, it is not malformed
}

// jsonReader is a recursive-descent JSON reader: one pass over the bytes,
// building nodes directly (encoding/json's token stream costs several
// allocations per token).
type jsonReader struct {
	data      []byte
	i         int
	maxDepth  int
	budget    int
	positions bool
	// lineOffset is added to the lines of nodes: the lines of the stream
	// before the data.
	lineOffset int
	lineStarts []int
	problems   []jsonError // found while reading, not fatal
	// cursor: positions are asked for in increasing order while reading,
	// so each is found by advancing from the last (linear in total, even
	// for a document on one long line).
	curOff, curLine, curCol int
}

// document reads the one value data must hold.
func (jr *jsonReader) document() (*yaml.Node, *jsonError) {
	jr.skipSpace()
	root, err := jr.value(1)
	if err != nil {
		return nil, err
	}
	jr.skipSpace()
	if jr.i < len(jr.data) {
		return nil, &jsonError{offset: jr.i, msg: "unexpected data after the JSON value"}
	}
	return root, nil
}

func (jr *jsonReader) skipSpace() {
	for jr.i < len(jr.data) {
		switch jr.data[jr.i] {
		case ' ', '\t', '\r', '\n':
			jr.i++
		default:
			return
		}
	}
}

// fail reports the byte at the reader's offset, the way encoding/json
// words it ("invalid character 'x' looking for beginning of value"), or
// the end of the input.
func (jr *jsonReader) fail(context string) *jsonError {
	if jr.i >= len(jr.data) {
		return &jsonError{offset: len(jr.data), msg: "unexpected end of input"}
	}
	return &jsonError{offset: jr.i, msg: "invalid character " + quoteChar(jr.data[jr.i]) + " " + context}
}

// quoteChar formats a byte as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	if c >= utf8.RuneSelf {
		s = strconv.Quote(string([]byte{c}))
	}
	return "'" + s[1:len(s)-1] + "'"
}

func (jr *jsonReader) node(kind yaml.Kind, tag string, start int) (*yaml.Node, *jsonError) {
	jr.budget--
	if jr.budget < 0 {
		return nil, &jsonError{offset: start, msg: "document has too many values", limit: true}
	}
	n := &yaml.Node{Kind: kind, Tag: tag}
	if jr.positions {
		n.Line, n.Column = jr.lineCol(start)
		n.Line += jr.lineOffset
	}
	return n, nil
}

// value reads the value starting at the reader's offset (white space
// already skipped).
func (jr *jsonReader) value(depth int) (*yaml.Node, *jsonError) {
	if jr.i >= len(jr.data) {
		return nil, jr.fail("")
	}
	start := jr.i
	switch c := jr.data[jr.i]; {
	case c == '{' || c == '[':
		if depth > jr.maxDepth {
			return nil, &jsonError{offset: start, msg: fmt.Sprintf("values are nested more than %d levels deep", jr.maxDepth), limit: true}
		}
		if c == '{' {
			return jr.object(depth)
		}
		return jr.array(depth)
	case c == '"':
		n, err := jr.node(yaml.ScalarNode, strTag, start)
		if err != nil {
			return nil, err
		}
		n.Style = yaml.DoubleQuotedStyle
		n.Value, err = jr.str()
		return n, err
	case c == '-' || c >= '0' && c <= '9':
		n, err := jr.node(yaml.ScalarNode, intTag, start)
		if err != nil {
			return nil, err
		}
		isFloat, err := jr.number()
		if err != nil {
			return nil, err
		}
		n.Value = string(jr.data[start:jr.i])
		if isFloat {
			n.Tag = floatTag
		}
		return n, nil
	case c == 't' || c == 'f' || c == 'n':
		word, tag := "true", boolTag
		switch c {
		case 'f':
			word = "false"
		case 'n':
			word, tag = "null", nullTag
		}
		for k := 1; k < len(word); k++ {
			jr.i = start + k
			if jr.i >= len(jr.data) || jr.data[jr.i] != word[k] {
				return nil, jr.fail(fmt.Sprintf("in literal %s (expecting %s)", word, quoteChar(word[k])))
			}
		}
		jr.i = start + len(word)
		n, err := jr.node(yaml.ScalarNode, tag, start)
		if err != nil {
			return nil, err
		}
		n.Value = word
		return n, nil
	}
	return nil, jr.fail("looking for beginning of value")
}

func (jr *jsonReader) object(depth int) (*yaml.Node, *jsonError) {
	n, err := jr.node(yaml.MappingNode, "!!map", jr.i)
	if err != nil {
		return nil, err
	}
	if jr.open('}') {
		return n, nil
	}
	var keys map[string]*yaml.Node
	for {
		if jr.i >= len(jr.data) || jr.data[jr.i] != '"' {
			return nil, jr.fail("looking for beginning of object key string")
		}
		kstart := jr.i
		k, err := jr.value(depth + 1)
		if err != nil {
			return nil, err
		}
		jr.skipSpace()
		if jr.i >= len(jr.data) || jr.data[jr.i] != ':' {
			return nil, jr.fail("after object key")
		}
		jr.i++
		jr.skipSpace()
		v, err := jr.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// Keys are compared once the object has more than a few, by map;
		// small objects by a scan.
		var first *yaml.Node
		if keys == nil && len(n.Content) >= 32 {
			keys = make(map[string]*yaml.Node, len(n.Content))
			for i := 0; i < len(n.Content); i += 2 {
				keys[n.Content[i].Value] = n.Content[i]
			}
		}
		if keys != nil {
			first = keys[k.Value]
			if first == nil {
				keys[k.Value] = k
			}
		} else {
			for i := 0; i < len(n.Content); i += 2 {
				if n.Content[i].Value == k.Value {
					first = n.Content[i]
					break
				}
			}
		}
		if first != nil {
			// Reported like YAML's: the first value is kept.
			msg := fmt.Sprintf("duplicate key %q", k.Value)
			if first.Line > 0 {
				msg += fmt.Sprintf(" (first at line %d)", first.Line)
			}
			jr.problems = append(jr.problems, jsonError{offset: kstart, msg: msg})
		} else {
			n.Content = append(n.Content, k, v)
		}
		done, err := jr.next('}', "after object key:value pair")
		if err != nil {
			return nil, err
		}
		if done {
			return n, nil
		}
	}
}

func (jr *jsonReader) array(depth int) (*yaml.Node, *jsonError) {
	n, err := jr.node(yaml.SequenceNode, "!!seq", jr.i)
	if err != nil {
		return nil, err
	}
	if jr.open(']') {
		return n, nil
	}
	for {
		v, err := jr.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
		done, err := jr.next(']', "after array element")
		if err != nil {
			return nil, err
		}
		if done {
			return n, nil
		}
	}
}

// open steps over an object's or array's opening bracket and the space
// after it, and over closer when it follows at once: then the object or
// array is empty.
func (jr *jsonReader) open(closer byte) (empty bool) {
	jr.i++
	jr.skipSpace()
	if jr.i < len(jr.data) && jr.data[jr.i] == closer {
		jr.i++
		return true
	}
	return false
}

// next reads what follows an element of an object or array: a comma (and
// the space after it), or closer, which ends it (done); anything else is
// an error, where says after what.
func (jr *jsonReader) next(closer byte, where string) (done bool, err *jsonError) {
	jr.skipSpace()
	if jr.i >= len(jr.data) {
		return false, jr.fail("")
	}
	switch jr.data[jr.i] {
	case ',':
		jr.i++
		jr.skipSpace()
		return false, nil
	case closer:
		jr.i++
		return true, nil
	default:
		return false, jr.fail(where)
	}
}

// str reads a string literal. Like encoding/json it refuses control
// characters and replaces invalid UTF-8 and lone surrogates with U+FFFD.
func (jr *jsonReader) str() (string, *jsonError) {
	jr.i++ // opening quote
	start := jr.i
	// Fast path: no escapes, valid UTF-8.
	for jr.i < len(jr.data) {
		c := jr.data[jr.i]
		if c == '"' {
			raw := jr.data[start:jr.i]
			jr.i++
			if utf8.Valid(raw) {
				return string(raw), nil
			}
			return toValidUTF8(raw), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", jr.fail("in string literal")
		}
		jr.i++
	}
	var b strings.Builder
	b.Write(jr.data[start:jr.i])
	for {
		if jr.i >= len(jr.data) {
			return "", jr.fail("")
		}
		c := jr.data[jr.i]
		switch {
		case c == '"':
			jr.i++
			s := b.String()
			if !utf8.ValidString(s) {
				s = toValidUTF8([]byte(s))
			}
			return s, nil
		case c < 0x20:
			return "", jr.fail("in string literal")
		case c != '\\':
			b.WriteByte(c)
			jr.i++
			continue
		}
		jr.i++ // backslash
		if jr.i >= len(jr.data) {
			return "", jr.fail("")
		}
		e := jr.data[jr.i]
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := jr.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if jr.i+2 < len(jr.data) && jr.data[jr.i+1] == '\\' && jr.data[jr.i+2] == 'u' {
					save := jr.i
					jr.i += 2
					if next, err := jr.hex4(); err == nil {
						r2 = next
					} else {
						return "", err
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b.WriteRune(dec)
						break
					}
					jr.i = save // not a pair: the second escape stands alone
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			return "", jr.fail("in string escape code")
		}
		jr.i++
	}
}

// hex4 reads the four hex digits after \u, leaving the offset on the last.
func (jr *jsonReader) hex4() (rune, *jsonError) {
	var r rune
	for k := 0; k < 4; k++ {
		jr.i++
		if jr.i >= len(jr.data) {
			return 0, jr.fail("")
		}
		c := jr.data[jr.i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, jr.fail(`in \u hexadecimal character escape`)
		}
	}
	return r, nil
}

// toValidUTF8 replaces each invalid byte with U+FFFD, as encoding/json does.
func toValidUTF8(raw []byte) string {
	var b strings.Builder
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.Write(raw[:size])
		}
		raw = raw[size:]
	}
	return b.String()
}

// number reads a JSON number and reports whether it has a fraction or an
// exponent.
func (jr *jsonReader) number() (bool, *jsonError) {
	d := jr.data
	if jr.i < len(d) && d[jr.i] == '-' {
		jr.i++
	}
	switch {
	case jr.i >= len(d):
		return false, jr.fail("")
	case d[jr.i] == '0':
		jr.i++
	case d[jr.i] >= '1' && d[jr.i] <= '9':
		for jr.i < len(d) && d[jr.i] >= '0' && d[jr.i] <= '9' {
			jr.i++
		}
	default:
		return false, jr.fail("in numeric literal")
	}
	isFloat := false
	if jr.i < len(d) && d[jr.i] == '.' {
		isFloat = true
		jr.i++
		if jr.i >= len(d) || d[jr.i] < '0' || d[jr.i] > '9' {
			return false, jr.fail("after decimal point in numeric literal")
		}
		for jr.i < len(d) && d[jr.i] >= '0' && d[jr.i] <= '9' {
			jr.i++
		}
	}
	if jr.i < len(d) && (d[jr.i] == 'e' || d[jr.i] == 'E') {
		isFloat = true
		jr.i++
		if jr.i < len(d) && (d[jr.i] == '+' || d[jr.i] == '-') {
			jr.i++
		}
		if jr.i >= len(d) || d[jr.i] < '0' || d[jr.i] > '9' {
			return false, jr.fail("in exponent of numeric literal")
		}
		for jr.i < len(d) && d[jr.i] >= '0' && d[jr.i] <= '9' {
			jr.i++
		}
	}
	return isFloat, nil
}

// lineCol converts a byte offset into a 1-based line and column (in
// characters, as YAML positions are).
func (jr *jsonReader) lineCol(off int) (int, int) {
	o := min(max(off, 0), len(jr.data))
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
	jr.ensureLineStarts()
	line := sort.Search(len(jr.lineStarts), func(i int) bool { return jr.lineStarts[i] > o }) - 1
	return line + 1, utf8.RuneCount(jr.data[jr.lineStarts[line]:o]) + 1
}

func (jr *jsonReader) ensureLineStarts() {
	if jr.lineStarts != nil {
		return
	}
	jr.lineStarts = []int{0}
	for i, b := range jr.data {
		if b == '\n' {
			jr.lineStarts = append(jr.lineStarts, i+1)
		}
	}
}

// jsonValid reports whether data is one valid JSON value.
func jsonValid(data []byte) bool { return json.Valid(data) }
