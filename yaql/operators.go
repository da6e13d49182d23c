// The binary operators: and, or, comparisons, in and arithmetic.

package yaql

import (
	"math"
	"strings"
)

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
