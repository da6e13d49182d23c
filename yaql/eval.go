package yaql

import (
	"errors"
	"fmt"
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
	// Memo, when set, is shared by evaluations over the same unchanging
	// data so that what they compute from it is computed once (see Memo).
	Memo *Memo
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
	ev := &evaluator{src: e.Source, in: in, steps: in.Limits.Steps, size: in.Limits.Size}
	if ev.steps <= 0 {
		ev.steps = DefaultSteps
	}
	if ev.size <= 0 {
		ev.size = DefaultSize
	}
	ev.memo = useMemo(in.Memo, ev.steps, ev.size)
	if in.Memo != nil {
		ev.funcs = in.Memo.builtins()
	} else {
		ev.funcs = builtins()
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
	memo  *Memo // nil: none
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
		if ev.memo != nil {
			if k, worth := memoKeyOf(n, opAttr, r); worth {
				return ev.remember(k, []any{r}, func() (any, error) { return ev.attrEach(n, r) })
			}
		}
		return ev.attrEach(n, r)
	}
	return nil, ev.errorf(n, "cannot read .%s of a %s", n.Name, typeName(recv))
}

// attrEach is `x.name` over a list: name read from each item.
func (ev *evaluator) attrEach(n *Attr, r []any) (any, error) {
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

func isLimit(err error) bool { return errors.Is(err, ErrLimit) }
