package yaql

import (
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/internal/suggest"
)

// Variables are the named variables an expression may read besides `$`:
// `$node` (the node's own part of its deployment data) and `$common` (the
// part every node of the cluster shares).
var Variables = []string{"node", "common"}

// check verifies what the parser built: functions exist and are called in
// a form and with a number of arguments they take, variables are known,
// pairs appear only where they mean something. It reports the first
// problem, at its position.
func check(src string, root Node) error {
	c := &checker{src: src, funcs: builtins()}
	c.node(root, false)
	if c.err != nil {
		return c.err
	}
	return nil
}

type checker struct {
	src   string
	funcs map[string]funcSpec
	err   *Error
}

func (c *checker) failf(n Node, format string, args ...any) {
	if c.err == nil {
		c.err = errorAt(c.src, n.Pos(), format, args...)
	}
}

// node checks n; pairOK says a `key => value` pair may stand here.
func (c *checker) node(n Node, pairOK bool) {
	if c.err != nil {
		return
	}
	switch x := n.(type) {
	case *Lit:
	case *Var:
		if x.Name != "" && !contains(anyList(Variables), x.Name) {
			c.failf(x, "unknown variable $%s (known: $, $%s)", x.Name, strings.Join(Variables, ", $"))
		}
	case *Attr:
		c.node(x.X, false)
	case *Index:
		c.node(x.X, false)
		if len(x.Args) == 0 || len(x.Args) > 2 {
			c.failf(x, "an index takes one value (or a key and a default), got %d", len(x.Args))
		}
		for _, a := range x.Args {
			c.node(a, false)
		}
	case *Unary:
		c.node(x.X, false)
	case *Binary:
		c.node(x.X, false)
		c.node(x.Y, false)
	case *List:
		for _, a := range x.Items {
			c.node(a, false)
		}
	case *Dict:
		for _, p := range x.Pairs {
			c.node(p.Key, false)
			c.node(p.Value, false)
		}
	case *Pair:
		if !pairOK {
			c.failf(x, "=> belongs in a dict {k => v} or in the arguments of dict, set or switch")
			return
		}
		c.node(x.Key, false)
		c.node(x.Value, false)
	case *Call:
		c.call(x)
	}
}

func (c *checker) call(x *Call) {
	spec, ok := c.funcs[x.Name]
	if !ok {
		c.failf(x, "unknown function %s%s", x.Name, suggest.Hint(x.Name, FunctionNames()))
		return
	}
	if x.Recv != nil {
		c.node(x.Recv, false)
		if spec.form&asMethod == 0 {
			c.failf(x, "%s is a function: write %s(…), not ….%s(…)", x.Name, x.Name, x.Name)
			return
		}
	} else if spec.form&asFunction == 0 {
		c.failf(x, "%s is a method: write ….%s(…)", x.Name, x.Name)
		return
	}
	n := len(x.Args)
	if x.Recv != nil {
		n++
	}
	if n < spec.min || spec.max >= 0 && n > spec.max {
		c.failf(x, "%s takes %s, got %d", x.Name, arity(spec, x.Recv != nil), n-receiverCount(x))
		return
	}
	for _, a := range x.Args {
		_, isPair := a.(*Pair)
		if x.Name == "switch" && !isPair {
			c.failf(&Lit{At: start(a)}, "switch takes condition => value pairs")
			return
		}
		c.node(a, spec.pairs)
	}
}

func receiverCount(x *Call) int {
	if x.Recv != nil {
		return 1
	}
	return 0
}

// arity says how many arguments a function takes, not counting the
// receiver of a method call.
func arity(spec funcSpec, method bool) string {
	lo, hi := spec.min, spec.max
	if method {
		lo, hi = max(lo-1, 0), max(hi-1, -1)
		if spec.max < 0 {
			hi = -1
		}
	}
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", n)
	}
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %s", plural(lo))
	case lo == hi:
		return plural(lo)
	default:
		return fmt.Sprintf("%d to %s", lo, plural(hi))
	}
}

func anyList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
