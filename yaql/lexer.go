package yaql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tIdent
	tVar
	tOp
)

type token struct {
	kind tokKind
	text string // operator, identifier or variable name (without '$')
	val  any    // value of a number or string
	pos  int
}

// operators, longest first.
var operators = []string{"=>", "->", "!=", "<=", ">=", "=~", "!~", "?.", "=", "<", ">", "+", "-", "*", "/", ".", ",", "(", ")", "[", "]", "{", "}"}

// lex splits a yaql expression into tokens.
func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '$':
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			out = append(out, token{kind: tVar, text: src[i+1 : j], pos: i})
			i = j
		case isDigit(c):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			float := false
			if j+1 < len(src) && src[j] == '.' && isDigit(src[j+1]) {
				float = true
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			text := src[i:j]
			var v any
			if float {
				f, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return nil, errorAt(src, i, "invalid number %s", text)
				}
				v = f
			} else {
				n, err := strconv.ParseInt(text, 10, 64)
				if err != nil {
					return nil, errorAt(src, i, "number %s is out of range", text)
				}
				v = n
			}
			out = append(out, token{kind: tNum, text: text, val: v, pos: i})
			i = j
		case c == '\'' || c == '"' || c == '`':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tStr, text: src[i : i+n], val: s, pos: i})
			i += n
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			out = append(out, token{kind: tIdent, text: src[i:j], pos: i})
			i = j
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, errorAt(src, i, "unexpected character %q", r)
			}
			out = append(out, token{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	out = append(out, token{kind: tEOF, pos: len(src)})
	return out, nil
}

// lexString reads a quoted string at src[start]: '…' and "…" with
// backslash escapes, `…` verbatim. It returns the value and the length.
func lexString(src string, start int) (string, int, error) {
	q := src[start]
	var b strings.Builder
	i := start + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == q:
			return b.String(), i + 1 - start, nil
		case c == '\\' && q != '`':
			if i+1 >= len(src) {
				return "", 0, errorAt(src, i, "unterminated string")
			}
			e := src[i+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"', '`':
				b.WriteByte(e)
			default:
				// Python keeps unknown escapes as they are.
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, errorAt(src, start, "unterminated string")
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }
