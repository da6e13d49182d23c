package yaql

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Input is what an expression reads.
type Input struct {
	// New is `$`: the node's deployment data as it stands.
	New any
	// Old is the deployment data of the node's last successful run of the
	// task; HasOld is false when it never ran (then every change function
	// is true, and old() reads an empty dict).
	Old    any
	HasOld bool
	// Vars are the named variables: `$node` and `$common` (see
	// DeploymentData). A variable the checker knows but Vars lacks is null.
	Vars map[string]any
	// Models are the models of legacy conditions (LegacyModels): settings,
	// cluster, release, node.
	Models map[string]any
	// Limits bound the evaluation; zero fields take the defaults.
	Limits Limits
}

// Limits bound one evaluation.
type Limits struct {
	// Steps is the most evaluation steps (nodes visited, items iterated).
	Steps int
	// Size is the largest string (bytes) or list (items) built.
	Size int
}

// Default limits: generous for real graphs, small enough to stop a hostile
// expression in well under a second.
const (
	DefaultSteps = 1_000_000
	DefaultSize  = 4 << 20
)

// ErrLimit marks an evaluation stopped by its Limits.
var ErrLimit = errors.New("evaluation limit exceeded")

// Eval evaluates the expression. Data in Input must be normalized
// (Normalize). A run-time error (a wrong type, a missing key read with
// []) is an *Error at the node that failed.
func (e *Expr) Eval(in Input) (any, error) {
	if e == nil || e.Root == nil {
		return nil, errors.New("no expression to evaluate")
	}
	ev := &evaluator{src: e.Source, in: in, steps: in.Limits.Steps, size: in.Limits.Size, funcs: builtins()}
	if ev.steps <= 0 {
		ev.steps = DefaultSteps
	}
	if ev.size <= 0 {
		ev.size = DefaultSize
	}
	return ev.eval(e.Root, in.New)
}

// Bool evaluates the expression as a condition: its truth value (Fuel runs
// a task when its condition is truthy).
func (e *Expr) Bool(in Input) (bool, error) {
	v, err := e.Eval(in)
	if err != nil {
		return false, err
	}
	return truthy(v), nil
}

type evaluator struct {
	src   string
	in    Input
	steps int
	size  int
	funcs map[string]funcSpec
}

// evalError is a run-time error at a node.
func (ev *evaluator) errorf(n Node, format string, args ...any) error {
	return errorAt(ev.src, n.Pos(), format, args...)
}

func (ev *evaluator) step(n Node) error {
	ev.steps--
	if ev.steps < 0 {
		return fmt.Errorf("%w: %w", ErrLimit, ev.errorf(n, "more than the allowed number of steps"))
	}
	return nil
}

// sized checks a built value against the size limit.
func (ev *evaluator) sized(n Node, v any) (any, error) {
	size := 0
	switch x := v.(type) {
	case string:
		size = len(x)
	case []any:
		size = len(x)
	case map[string]any:
		size = len(x)
	}
	if size > ev.size {
		return nil, fmt.Errorf("%w: %w", ErrLimit, ev.errorf(n, "a value of %d exceeds the size limit of %d", size, ev.size))
	}
	return v, nil
}

// eval evaluates n with `$` bound to dollar.
func (ev *evaluator) eval(n Node, dollar any) (any, error) {
	if err := ev.step(n); err != nil {
		return nil, err
	}
	switch x := n.(type) {
	case *Lit:
		return x.Value, nil
	case *Var:
		if x.Name == "" {
			return dollar, nil
		}
		return ev.in.Vars[x.Name], nil
	case *Attr:
		recv, err := ev.eval(x.X, dollar)
		if err != nil {
			return nil, err
		}
		return ev.attr(x, recv)
	case *Index:
		return ev.index(x, dollar)
	case *Call:
		return ev.call(x, dollar)
	case *Unary:
		v, err := ev.eval(x.X, dollar)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case "not":
			return !truthy(v), nil
		case "-":
			switch n := v.(type) {
			case int64:
				return -n, nil
			case float64:
				return -n, nil
			}
			return nil, ev.errorf(x, "cannot negate a %s", typeName(v))
		default:
			if _, ok := number(v); !ok || isBool(v) {
				return nil, ev.errorf(x, "unary + needs a number, got a %s", typeName(v))
			}
			return v, nil
		}
	case *Binary:
		return ev.binary(x, dollar)
	case *List:
		out := make([]any, 0, len(x.Items))
		for _, item := range x.Items {
			v, err := ev.eval(item, dollar)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *Dict:
		out := make(map[string]any, len(x.Pairs))
		for _, p := range x.Pairs {
			k, v, err := ev.pair(p, dollar)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case *ModelRef:
		return ev.modelRef(x)
	case *Pair:
		return nil, ev.errorf(x, "=> belongs in a dict or in the arguments of dict or switch")
	}
	return nil, ev.errorf(n, "cannot evaluate %T", n)
}

// pair evaluates a dict entry. Cairn's data is JSON, so keys are strings:
// a number, boolean or null key becomes its JSON text, as Python's json
// writes it.
func (ev *evaluator) pair(p *Pair, dollar any) (string, any, error) {
	k, err := ev.eval(p.Key, dollar)
	if err != nil {
		return "", nil, err
	}
	var ks string
	switch x := k.(type) {
	case string:
		ks = x
	case nil, bool, int64, float64:
		var b strings.Builder
		_ = pyJSON(&b, x, ev.size)
		ks = b.String()
	default:
		return "", nil, ev.errorf(p.Key, "a dict key cannot be a %s", typeName(k))
	}
	v, err := ev.eval(p.Value, dollar)
	return ks, v, err
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

// attr is `x.name`: a dict's value, or the values of name in each dict of
// a list. A missing key is an error, as in yaql (`get` reads optional
// keys).
func (ev *evaluator) attr(n *Attr, recv any) (any, error) {
	switch r := recv.(type) {
	case map[string]any:
		v, ok := r[n.Name]
		if !ok {
			return nil, ev.errorf(n, "no key %q (read an optional key with get('%s'))", n.Name, n.Name)
		}
		return v, nil
	case []any:
		out := make([]any, 0, len(r))
		for _, e := range r {
			if err := ev.step(n); err != nil {
				return nil, err
			}
			v, err := ev.attr(n, e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, ev.errorf(n, "cannot read .%s of a %s", n.Name, typeName(recv))
}

func (ev *evaluator) index(n *Index, dollar any) (any, error) {
	recv, err := ev.eval(n.X, dollar)
	if err != nil {
		return nil, err
	}
	if len(n.Args) == 0 || len(n.Args) > 2 {
		return nil, ev.errorf(n, "an index takes one or two values, got %d", len(n.Args))
	}
	args := make([]any, len(n.Args))
	for i, a := range n.Args {
		if args[i], err = ev.eval(a, dollar); err != nil {
			return nil, err
		}
	}
	switch r := recv.(type) {
	case map[string]any:
		k, ok := args[0].(string)
		v, found := r[k]
		if ok && found {
			return v, nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		return nil, ev.errorf(n, "no key %s in the dict", quoteSnippet(fmt.Sprint(args[0])))
	case []any:
		i, ok := args[0].(int64)
		if !ok || len(args) != 1 {
			return nil, ev.errorf(n, "a list is indexed by one integer")
		}
		if i < 0 {
			i += int64(len(r))
		}
		if i < 0 || i >= int64(len(r)) {
			return nil, ev.errorf(n, "index %d is out of range (length %d)", args[0], len(r))
		}
		return r[i], nil
	}
	return nil, ev.errorf(n, "cannot index a %s", typeName(recv))
}

func (ev *evaluator) binary(n *Binary, dollar any) (any, error) {
	left, err := ev.eval(n.X, dollar)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case "and":
		if !truthy(left) {
			return left, nil
		}
		return ev.eval(n.Y, dollar)
	case "or":
		if truthy(left) {
			return left, nil
		}
		return ev.eval(n.Y, dollar)
	}
	right, err := ev.eval(n.Y, dollar)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case "=", "==":
		return equal(left, right), nil
	case "!=":
		return !equal(left, right), nil
	case "<", ">", "<=", ">=":
		c, err := ev.compare(n, left, right)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case "<":
			return c < 0, nil
		case ">":
			return c > 0, nil
		case "<=":
			return c <= 0, nil
		default:
			return c >= 0, nil
		}
	case "in":
		switch r := right.(type) {
		case []any:
			return contains(r, left), nil
		case string:
			l, ok := left.(string)
			if !ok {
				return nil, ev.errorf(n, "in a string, look for a string, not a %s", typeName(left))
			}
			return strings.Contains(r, l), nil
		}
		return nil, ev.errorf(n, "cannot look for a value in a %s (in reads lists and strings; read a dict with get)", typeName(right))
	case "+":
		return ev.plus(n, left, right)
	case "-", "*", "/", "mod":
		return ev.arith(n, left, right)
	}
	return nil, ev.errorf(n, "unknown operator %s", n.Op)
}

// compare orders two numbers or two strings.
func (ev *evaluator) compare(n *Binary, a, b any) (int, error) {
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	}
	x, okA := number(a)
	y, okB := number(b)
	if okA && okB && !isBool(a) && !isBool(b) {
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	}
	return 0, ev.errorf(n, "cannot compare a %s with a %s", typeName(a), typeName(b))
}

func (ev *evaluator) plus(n *Binary, a, b any) (any, error) {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return ev.sized(n, x+y)
		}
	case []any:
		if y, ok := b.([]any); ok {
			out := make([]any, 0, len(x)+len(y))
			return ev.sized(n, append(append(out, x...), y...))
		}
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			out := make(map[string]any, len(x)+len(y))
			for k, v := range x {
				out[k] = v
			}
			for k, v := range y {
				out[k] = v
			}
			return ev.sized(n, out)
		}
	case int64, float64:
		if _, ok := b.(bool); !ok {
			return ev.arith(n, a, b)
		}
	}
	return nil, ev.errorf(n, "cannot add a %s and a %s", typeName(a), typeName(b))
}

// arith is + - * / mod over numbers; integers stay integers except for /
// that does not divide evenly (Python 3's true division gives a float).
func (ev *evaluator) arith(n *Binary, a, b any) (any, error) {
	if isBool(a) || isBool(b) {
		return nil, ev.errorf(n, "operator %s needs numbers, got a %s and a %s", n.Op, typeName(a), typeName(b))
	}
	ia, intA := a.(int64)
	ib, intB := b.(int64)
	fa, okA := number(a)
	fb, okB := number(b)
	if !okA || !okB {
		return nil, ev.errorf(n, "operator %s needs numbers, got a %s and a %s", n.Op, typeName(a), typeName(b))
	}
	if intA && intB {
		switch n.Op {
		case "+":
			return ia + ib, nil
		case "-":
			return ia - ib, nil
		case "*":
			return ia * ib, nil
		case "/", "mod":
			if ib == 0 {
				return nil, ev.errorf(n, "division by zero")
			}
			if n.Op == "mod" {
				m := ia % ib
				if m != 0 && (m < 0) != (ib < 0) {
					m += ib
				}
				return m, nil
			}
			q := ia / ib
			if (ia%ib != 0) && ((ia < 0) != (ib < 0)) {
				q--
			}
			return q, nil
		}
	}
	switch n.Op {
	case "+":
		return fa + fb, nil
	case "-":
		return fa - fb, nil
	case "*":
		return fa * fb, nil
	case "/":
		if fb == 0 {
			return nil, ev.errorf(n, "division by zero")
		}
		return fa / fb, nil
	default:
		if fb == 0 {
			return nil, ev.errorf(n, "division by zero")
		}
		return fa - fb*math.Floor(fa/fb), nil
	}
}

// asInt reads an integer argument.
func asInt(v any) (int64, bool) {
	i, ok := v.(int64)
	return i, ok
}

func isLimit(err error) bool { return errors.Is(err, ErrLimit) }
