package yaql

// Expr is a parsed and checked yaql expression, ready to be evaluated any
// number of times.
type Expr struct {
	Source string
	Root   Node
}

// MaxSource is the longest expression Parse accepts, in bytes.
const MaxSource = 64 << 10

// maxDepth bounds nesting, so a hostile expression cannot exhaust the stack.
const maxDepth = 200

// Parse parses and checks a yaql 2.0 expression. Syntax yaql has but Cairn
// does not support, an unknown function or a wrong number of arguments is
// an *Error with its position.
func Parse(src string) (*Expr, error) {
	if len(src) > MaxSource {
		return nil, errorAt(src, 0, "expression is %d bytes long, more than the %d allowed", len(src), MaxSource)
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	root := p.expr(0)
	if p.err == nil && p.peek().kind != tEOF {
		p.failf(p.peek().pos, "unexpected %s", p.describe(p.peek()))
	}
	if p.err != nil {
		return nil, p.err
	}
	if err := check(src, root); err != nil {
		return nil, err
	}
	return &Expr{Source: src, Root: root}, nil
}

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	err   *Error
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func (p *parser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tIdent && t.text == w
}

func (p *parser) failf(pos int, format string, args ...any) {
	if p.err == nil {
		p.err = errorAt(p.src, pos, format, args...)
	}
}

func (p *parser) describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tStr:
		return "string " + quoteSnippet(t.text)
	case tVar:
		return "$" + t.text
	default:
		return quoteSnippet(t.text)
	}
}

func (p *parser) expect(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	p.failf(p.peek().pos, "expected %q, got %s", op, p.describe(p.peek()))
	return false
}

// Binding powers, loosest first, as yaql 2.0 orders its operators.
const (
	bpArrow = 10 + iota*10
	bpOr
	bpAnd
	bpNot
	bpCompare
	bpAdd
	bpMul
	bpUnary
)

// binaryPower is the binding power of the binary operator at the cursor.
func (p *parser) binaryPower() (string, int) {
	t := p.peek()
	switch t.kind {
	case tIdent:
		switch t.text {
		case "or":
			return "or", bpOr
		case "and":
			return "and", bpAnd
		case "in":
			return "in", bpCompare
		case "mod":
			return "mod", bpMul
		}
	case tOp:
		switch t.text {
		case "->":
			return "->", bpArrow
		case "=", "!=", "<", ">", "<=", ">=":
			return t.text, bpCompare
		case "+", "-":
			return t.text, bpAdd
		case "*", "/":
			return t.text, bpMul
		case "=~", "!~":
			return t.text, bpUnary
		}
	}
	return "", 0
}

// tooDeep reports, as an error at pos, whether the parse has entered more
// than maxDepth nested expressions (depth counts them).
func (p *parser) tooDeep(pos int) bool {
	if p.depth <= maxDepth {
		return false
	}
	p.failf(pos, "expression nests deeper than %d levels", maxDepth)
	return true
}

// expr parses an expression whose operators bind tighter than min.
func (p *parser) expr(min int) Node {
	p.depth++
	defer func() { p.depth-- }()
	if p.tooDeep(p.peek().pos) {
		return &Lit{At: p.peek().pos}
	}
	left := p.prefix()
	for p.err == nil {
		op, bp := p.binaryPower()
		if bp == 0 || bp <= min {
			break
		}
		t := p.next()
		switch op {
		case "=~", "!~":
			p.failf(t.pos, "operator %s is not supported (use matches)", op)
		case "->":
			p.failf(t.pos, "operator -> is not supported")
		}
		if p.err != nil {
			break
		}
		next := bp
		if op == "->" {
			next = bp - 1 // right associative
		}
		right := p.expr(next)
		left = &Binary{At: t.pos, Op: op, X: left, Y: right}
	}
	return left
}

func (p *parser) prefix() Node {
	t := p.peek()
	switch {
	case t.kind == tIdent && t.text == "not":
		p.next()
		return &Unary{At: t.pos, Op: "not", X: p.expr(bpNot)}
	case t.kind == tOp && (t.text == "-" || t.text == "+"):
		p.next()
		return &Unary{At: t.pos, Op: t.text, X: p.expr(bpUnary)}
	}
	return p.postfix(p.primary())
}

// keywordLit is the literal an identifier token true, false or null
// names, in both grammars.
func keywordLit(t token) (*Lit, bool) {
	switch t.text {
	case "true":
		return &Lit{At: t.pos, Value: true}, true
	case "false":
		return &Lit{At: t.pos, Value: false}, true
	case "null":
		return &Lit{At: t.pos, Value: nil}, true
	}
	return nil, false
}

func (p *parser) primary() Node {
	t := p.next()
	switch t.kind {
	case tNum, tStr:
		return &Lit{At: t.pos, Value: t.val}
	case tVar:
		return &Var{At: t.pos, Name: t.text}
	case tIdent:
		if lit, ok := keywordLit(t); ok {
			return lit
		}
		switch t.text {
		case "and", "or", "in", "mod":
			p.failf(t.pos, "unexpected %q", t.text)
			return &Lit{At: t.pos}
		}
		if p.isOp("(") {
			p.next()
			return &Call{At: t.pos, Name: t.text, Args: p.args(")")}
		}
		return &Lit{At: t.pos, Value: t.text}
	case tOp:
		switch t.text {
		case "(":
			x := p.expr(0)
			p.expect(")")
			return x
		case "[":
			return &List{At: t.pos, Items: p.args("]")}
		case "{":
			d := &Dict{At: t.pos}
			for _, a := range p.args("}") {
				pair, ok := a.(*Pair)
				if !ok {
					p.failf(start(a), "a dict holds key => value pairs")
					continue
				}
				d.Pairs = append(d.Pairs, pair)
			}
			return d
		}
	}
	p.failf(t.pos, "unexpected %s", p.describe(t))
	return &Lit{At: t.pos}
}

// args parses a comma-separated list up to the closing token; an item may
// be a `key => value` pair.
func (p *parser) args(closing string) []Node {
	var out []Node
	if p.isOp(closing) {
		p.next()
		return out
	}
	for p.err == nil {
		x := p.expr(0)
		if p.isOp("=>") {
			at := p.next().pos
			x = &Pair{At: at, Key: x, Value: p.expr(0)}
		}
		out = append(out, x)
		if p.isOp(",") {
			p.next()
			continue
		}
		p.expect(closing)
		break
	}
	return out
}

func (p *parser) postfix(x Node) Node {
	for p.err == nil {
		switch {
		case p.isOp("."):
			dot := p.next()
			name := p.next()
			if name.kind != tIdent {
				p.failf(name.pos, "expected a name after '.', got %s", p.describe(name))
				return x
			}
			if p.isOp("(") {
				p.next()
				x = &Call{At: name.pos, Recv: x, Name: name.text, Args: p.args(")")}
				continue
			}
			x = &Attr{At: dot.pos, X: x, Name: name.text}
		case p.isOp("?."):
			p.failf(p.peek().pos, "operator ?. is not supported")
			return x
		case p.isOp("["):
			at := p.next().pos
			x = &Index{At: at, X: x, Args: p.args("]")}
		default:
			return x
		}
	}
	return x
}
