package graphs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Writers of graph documents. A small block-YAML writer: yaml.v3's emitter keeps
// every event of a document in memory (hundreds of megabytes for ten
// thousand tasks); the values written here are few (objects, lists,
// strings, numbers, booleans, null), so they are rendered directly. Strings
// are written plain only when no YAML 1.1 or 1.2 reader could take them for
// anything else, as literal blocks when multi-line and simple, and
// double-quoted otherwise.
type yamlWriter struct {
	buf bytes.Buffer
}

func (w *yamlWriter) indent(n int) {
	for range n {
		w.buf.WriteByte(' ')
	}
}

// maxImplicitKey is YAML's limit on the length of a "key:" key, with room
// for readers that count differently.
const maxImplicitKey = 1000

// mapping writes an object's fields at indent; with inline the first field
// continues the current line (after "- ").
func (w *yamlWriter) mapping(o outObject, indent int, inline bool) error {
	for i, f := range o {
		if i > 0 || !inline {
			w.indent(indent)
		}
		key := yamlString(f.key, false)
		if len(key) > maxImplicitKey {
			// YAML limits implicit keys to 1024 characters: use "? key".
			w.buf.WriteString("? ")
			w.buf.WriteString(key)
			w.buf.WriteByte('\n')
			w.indent(indent)
		} else {
			w.buf.WriteString(key)
		}
		w.buf.WriteByte(':')
		if err := w.after(f.value, indent, false); err != nil {
			return fmt.Errorf("%s: %w", f.key, err)
		}
	}
	return nil
}

// sequence writes a block list's items at indent.
func (w *yamlWriter) sequence(list []any, indent int) error {
	for i, item := range list {
		w.indent(indent)
		w.buf.WriteByte('-')
		if err := w.after(item, indent, true); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

// after writes a value that follows "key:" (or "-", for a list item) on a
// line of a block at indent; nested blocks go two spaces deeper.
func (w *yamlWriter) after(v any, indent int, item bool) error {
	switch x := v.(type) {
	case outObject:
		if len(x) == 0 {
			w.buf.WriteString(" {}\n")
			return nil
		}
		if item {
			w.buf.WriteByte(' ')
			return w.mapping(x, indent+2, true)
		}
		w.buf.WriteByte('\n')
		return w.mapping(x, indent+2, false)
	case []any:
		if len(x) == 0 {
			w.buf.WriteString(" []\n")
			return nil
		}
		if flowable(x) {
			w.buf.WriteString(" [")
			for i, item := range x {
				if i > 0 {
					w.buf.WriteString(", ")
				}
				s, err := yamlScalar(item, true)
				if err != nil {
					return err
				}
				w.buf.WriteString(s)
			}
			w.buf.WriteString("]\n")
			return nil
		}
		w.buf.WriteByte('\n')
		return w.sequence(x, indent+2)
	case string:
		if literalBlockOK(x) {
			w.literal(x, indent+2)
			return nil
		}
	}
	s, err := yamlScalar(v, false)
	if err != nil {
		return err
	}
	w.buf.WriteByte(' ')
	w.buf.WriteString(s)
	w.buf.WriteByte('\n')
	return nil
}

// literal writes a multi-line string as a literal block.
func (w *yamlWriter) literal(s string, indent int) {
	body, chomp := s, "-"
	if strings.HasSuffix(s, "\n") {
		body, chomp = s[:len(s)-1], ""
	}
	w.buf.WriteString(" |" + chomp + "\n")
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			w.indent(indent)
			w.buf.WriteString(line)
		}
		w.buf.WriteByte('\n')
	}
}

// flowable reports a list short and simple enough for [a, b].
func flowable(list []any) bool {
	for _, item := range list {
		switch x := item.(type) {
		case outObject, []any:
			return false
		case string:
			if strings.Contains(x, "\n") {
				return false
			}
		}
	}
	return true
}

// yamlScalar renders a scalar; flow marks the inside of [ ].
func yamlScalar(v any, flow bool) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case string:
		return yamlString(x, flow), nil
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return string(x), nil
		}
		if _, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return string(x), nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return "", fmt.Errorf("number %q: %w", x, err)
		}
		return yamlScalar(outFloat(f), flow)
	case outFloat:
		f := float64(x)
		switch {
		case math.IsNaN(f):
			return ".nan", nil
		case math.IsInf(f, 1):
			return ".inf", nil
		case math.IsInf(f, -1):
			return "-.inf", nil
		}
		return x.text()
	default:
		return "", fmt.Errorf("unsupported value of type %T", v)
	}
}

// yamlString writes s plain when that is unambiguous, else double-quoted
// (Go's escapes are a subset of YAML's).
func yamlString(s string, flow bool) string {
	if plainOK(s, flow) {
		return s
	}
	return strconv.Quote(s)
}

// plainWords are plain scalars that YAML 1.1 or 1.2 readers resolve to
// something other than a string.
var plainWords = map[string]bool{
	"null": true, "~": true, "true": true, "false": true, "yes": true, "no": true,
	"on": true, "off": true, "y": true, "n": true, "<<": true, "=": true,
}

// plainOK is deliberately strict: anything starting like a number, an
// indicator or a special value is quoted.
func plainOK(s string, flow bool) bool {
	if s == "" || plainWords[strings.ToLower(s)] || !utf8.ValidString(s) {
		return false
	}
	switch s[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
		' ', '.', '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return false
	}
	if last := s[len(s)-1]; last == ' ' || last == ':' {
		return false
	}
	prev := rune(0)
	for i, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return false
		case r >= 0x80 && (!unicode.IsPrint(r) || r == '\ufeff'):
			return false
		case r == '#' && prev == ' ':
			return false
		case r == ':' && (i+1 == len(s) || s[i+1] == ' ' || (flow && strings.ContainsRune(",[]{}", rune(s[i+1])))):
			return false
		case flow && !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./=+-", r))):
			// Inside [ ] readers disagree on much more; keep to names.
			return false
		}
		prev = r
	}
	return true
}

// literalBlockOK reports a multi-line string a literal block keeps exactly:
// printable, its first line not indented, no blank-looking line holding
// spaces, at most one trailing newline.
func literalBlockOK(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasSuffix(s, "\n\n") || !utf8.ValidString(s) {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' {
		return false
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(s, "\n"), "\n") {
		if line != "" && strings.TrimLeft(line, " \t") == "" {
			return false
		}
		for _, r := range line {
			if r == '\t' {
				continue
			}
			if r < 0x20 || r == 0x7f || (r >= 0x80 && (!unicode.IsPrint(r) || r == '\ufeff')) {
				return false
			}
		}
	}
	return true
}

// writeJSON writes a document value as indented JSON, keeping the order of
// object fields, with whole floats keeping their decimal point and <, >, &
// left as they are.
func writeJSON(buf *bytes.Buffer, v any, indent int) error {
	newline := func(n int) {
		buf.WriteByte('\n')
		for range n {
			buf.WriteString("  ")
		}
	}
	switch x := v.(type) {
	case outObject:
		if len(x) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			newline(indent + 1)
			writeJSONString(buf, f.key)
			buf.WriteString(": ")
			if err := writeJSON(buf, f.value, indent+1); err != nil {
				return fmt.Errorf("%s: %w", f.key, err)
			}
		}
		newline(indent)
		buf.WriteByte('}')
	case []any:
		if len(x) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			newline(indent + 1)
			if err := writeJSON(buf, item, indent+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		newline(indent)
		buf.WriteByte(']')
	case string:
		writeJSONString(buf, x)
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case json.Number:
		if !json.Valid([]byte(x)) {
			return fmt.Errorf("invalid number %q", string(x))
		}
		buf.WriteString(string(x))
	case outFloat:
		s, err := x.text()
		if err != nil {
			return err
		}
		buf.WriteString(s)
	default:
		return fmt.Errorf("unsupported value of type %T", v)
	}
	return nil
}

// writeJSONString escapes as encoding/json does without HTML escaping:
// quotes, backslashes, control characters, U+2028 and U+2029; invalid
// UTF-8 becomes U+FFFD.
func writeJSONString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case c == '\n':
				buf.WriteString(`\n`)
			case c == '\r':
				buf.WriteString(`\r`)
			case c == '\t':
				buf.WriteString(`\t`)
			case c < 0x20:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			default:
				buf.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[r&0xf])
		default:
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
}
