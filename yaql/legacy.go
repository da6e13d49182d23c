package yaql

import (
	"regexp"
	"strconv"
	"strings"
)

// ModelRef is a legacy reference `model:path.to.value`
// (settings:common.debug.value, cluster:status).
type ModelRef struct {
	At    int
	Model string
	Path  []string
}

func (n *ModelRef) Pos() int { return n.At }

// LegacyModels are the models a legacy condition may read:
//
//	settings  the cluster's settings tree as stored (Fuel's editable
//	          attributes, so settings:common.debug.value)
//	cluster   the cluster's fields: id, name, release_id, plus whatever
//	          the settings' "cluster" section holds (status, mode,
//	          net_provider as Fuel knew them)
//	release   the release: id, name, version
//	node      the node: id, uid, name, roles, and its attributes
var LegacyModels = []string{"settings", "cluster", "release", "node"}

var modelRefRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9_\-.]+)`)

// ParseLegacy parses and checks a condition in nailgun's legacy syntax:
// model references, string, number, true/false/null literals, == and !=,
// in, and/or/not and parentheses. Precedence, loosest first: or, and,
// == and !=, in, not.
func ParseLegacy(src string) (*Expr, error) {
	if len(src) > MaxSource {
		return nil, errorAt(src, 0, "expression is %d bytes long, more than the %d allowed", len(src), MaxSource)
	}
	toks, err := lexLegacy(src)
	if err != nil {
		return nil, err
	}
	p := &legacyParser{parser{src: src, toks: toks}}
	root := p.or()
	if p.err == nil && p.peek().kind != tEOF {
		p.failf(p.peek().pos, "unexpected %s", p.describe(p.peek()))
	}
	if p.err != nil {
		return nil, p.err
	}
	return &Expr{Source: src, Root: root}, nil
}

// IsLegacy tells a legacy condition from Cairn's own template conditions
// by its form: no "{{", and it reads a model (settings:…) or compares with
// == or !=. A source that stops lexing in the legacy syntax is legacy when
// a model reference came before the trouble (so that the legacy parser
// reports it).
func IsLegacy(src string) bool {
	if strings.Contains(src, "{{") {
		return false
	}
	toks, err := lexLegacy(src)
	for _, t := range toks {
		if t.kind == tModel || err == nil && t.kind == tOp && (t.text == "==" || t.text == "!=") {
			return true
		}
	}
	return false
}

const tModel = tOp + 1

// lexLegacy splits a legacy condition into tokens; on an error it returns
// the tokens read before it too.
func lexLegacy(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			s, n, err := lexString(src, i)
			if err != nil {
				return out, err
			}
			out = append(out, token{kind: tStr, text: src[i : i+n], val: s, pos: i})
			i += n
		case isDigit(c) || c == '-' && i+1 < len(src) && isDigit(src[i+1]):
			j := i + 1
			for j < len(src) && (isDigit(src[j]) || src[j] == '.') {
				j++
			}
			text := src[i:j]
			var v any
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				v = n
			} else if f, err := strconv.ParseFloat(text, 64); err == nil {
				v = f
			} else {
				return out, errorAt(src, i, "invalid number %s", text)
			}
			out = append(out, token{kind: tNum, text: text, val: v, pos: i})
			i = j
		case isIdentStart(c):
			if m := modelRefRE.FindStringSubmatch(src[i:]); m != nil {
				out = append(out, token{kind: tModel, text: m[0], pos: i})
				i += len(m[0])
				continue
			}
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			out = append(out, token{kind: tIdent, text: src[i:j], pos: i})
			i = j
		case strings.HasPrefix(src[i:], "=="), strings.HasPrefix(src[i:], "!="):
			out = append(out, token{kind: tOp, text: src[i : i+2], pos: i})
			i += 2
		case c == '(' || c == ')':
			out = append(out, token{kind: tOp, text: src[i : i+1], pos: i})
			i++
		default:
			if c == '=' {
				return out, errorAt(src, i, "unexpected '=' (compare with ==)")
			}
			return out, errorAt(src, i, "unexpected character %q", rune(c))
		}
	}
	return append(out, token{kind: tEOF, pos: len(src)}), nil
}

type legacyParser struct{ parser }

func (p *legacyParser) binary(ops []string, next func() Node) Node {
	left := next()
	for p.err == nil {
		t := p.peek()
		if !(t.kind == tIdent || t.kind == tOp) || !contains(anyList(ops), t.text) {
			return left
		}
		p.next()
		left = &Binary{At: t.pos, Op: t.text, X: left, Y: next()}
	}
	return left
}

func (p *legacyParser) or() Node  { return p.binary([]string{"or"}, p.and) }
func (p *legacyParser) and() Node { return p.binary([]string{"and"}, p.eq) }
func (p *legacyParser) eq() Node  { return p.binary([]string{"==", "!="}, p.in) }
func (p *legacyParser) in() Node  { return p.binary([]string{"in"}, p.not) }

func (p *legacyParser) not() Node {
	if p.isWord("not") {
		t := p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.tooDeep(t.pos) {
			return &Lit{At: t.pos}
		}
		return &Unary{At: t.pos, Op: "not", X: p.not()}
	}
	return p.atom()
}

func (p *legacyParser) atom() Node {
	t := p.next()
	switch t.kind {
	case tNum, tStr:
		return &Lit{At: t.pos, Value: t.val}
	case tModel:
		model, path, _ := strings.Cut(t.text, ":")
		if !contains(anyList(LegacyModels), model) {
			p.failf(t.pos, "unknown model %q (known: %s)", model, strings.Join(LegacyModels, ", "))
			return &Lit{At: t.pos}
		}
		parts := strings.Split(path, ".")
		for _, part := range parts {
			if part == "" {
				p.failf(t.pos, "empty name in %s", t.text)
			}
		}
		return &ModelRef{At: t.pos, Model: model, Path: parts}
	case tIdent:
		if lit, ok := keywordLit(t); ok {
			return lit
		}
		p.failf(t.pos, "unexpected %q: a legacy condition reads model:path (settings:…, cluster:…), literals, ==, !=, in, and, or, not", t.text)
		return &Lit{At: t.pos}
	case tOp:
		if t.text == "(" {
			p.depth++
			defer func() { p.depth-- }()
			if p.tooDeep(t.pos) {
				return &Lit{At: t.pos}
			}
			x := p.or()
			p.expect(")")
			return x
		}
	}
	p.failf(t.pos, "unexpected %s", p.describe(t))
	return &Lit{At: t.pos}
}

// modelRef reads a legacy reference from Input.Models; a missing part is
// an error, as in nailgun's strict mode.
func (ev *evaluator) modelRef(n *ModelRef) (any, error) {
	v, ok := ev.in.Models[n.Model]
	if !ok {
		return nil, ev.errorf(n, "%s: no %s data", n.Model, n.Model)
	}
	for i, part := range n.Path {
		d, ok := v.(map[string]any)
		if !ok {
			return nil, ev.errorf(n, "%s:%s: %s is a %s, not a dict", n.Model, strings.Join(n.Path, "."), strings.Join(n.Path[:i], "."), typeName(v))
		}
		v, ok = d[part]
		if !ok {
			return nil, ev.errorf(n, "%s:%s: no %q", n.Model, strings.Join(n.Path, "."), part)
		}
	}
	return v, nil
}
