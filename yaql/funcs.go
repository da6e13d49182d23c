package yaql

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// form says how a function may be called.
type form int

const (
	asFunction form = 1 << iota // f(x, …)
	asMethod                    // x.f(…)
	both       = asFunction | asMethod
)

// funcSpec describes one function: how it is called, how many arguments it
// takes (the receiver of a method call counts as the first), which are
// expressions evaluated by the function itself (lazy), and whether it
// takes `key => value` pairs.
type funcSpec struct {
	form     form
	min, max int // max -1: any number
	lazy     func(i int) bool
	pairs    bool
	impl     func(ev *evaluator, c *Call, dollar any, args []any) (any, error)
}

func lazyFrom(k int) func(int) bool { return func(i int) bool { return i >= k } }

// builtins returns every function Cairn's yaql knows. (A function, not a
// package variable: the table refers to the evaluator, which reads it.)
func builtins() map[string]funcSpec {
	return map[string]funcSpec{
		"get":        {form: asMethod, min: 2, max: 3, impl: fnGet},
		"values":     {form: asMethod, min: 1, max: 1, impl: fnValues},
		"keys":       {form: asMethod, min: 1, max: 1, impl: fnKeys},
		"items":      {form: asMethod, min: 1, max: 1, impl: fnItems},
		"len":        {form: both, min: 1, max: 1, impl: fnLen},
		"count":      {form: asMethod, min: 1, max: 1, impl: fnLen},
		"where":      {form: asMethod, min: 2, max: 2, lazy: lazyFrom(1), impl: fnWhere},
		"select":     {form: asMethod, min: 2, max: 2, lazy: lazyFrom(1), impl: fnSelect},
		"any":        {form: asMethod, min: 1, max: 2, lazy: lazyFrom(1), impl: fnAny},
		"all":        {form: asMethod, min: 1, max: 2, lazy: lazyFrom(1), impl: fnAll},
		"first":      {form: asMethod, min: 1, max: 2, impl: fnFirst},
		"last":       {form: asMethod, min: 1, max: 2, impl: fnLast},
		"distinct":   {form: asMethod, min: 1, max: 1, impl: fnDistinct},
		"flatten":    {form: asMethod, min: 1, max: 1, impl: fnFlatten},
		"toSet":      {form: asMethod, min: 1, max: 1, impl: fnToSet},
		"intersect":  {form: asMethod, min: 2, max: 2, impl: fnIntersect},
		"matches":    {form: asMethod, min: 2, max: 2, impl: fnMatches},
		"concat":     {form: both, min: 1, max: -1, impl: fnConcat},
		"coalesce":   {form: asFunction, min: 1, max: -1, lazy: lazyFrom(0), impl: fnCoalesce},
		"switch":     {form: asFunction, min: 1, max: -1, pairs: true, lazy: lazyFrom(0), impl: fnSwitch},
		"dict":       {form: asFunction, min: 0, max: -1, pairs: true, impl: fnDict},
		"set":        {form: both, min: 0, max: -1, pairs: true, impl: fnSet},
		"toYaml":     {form: both, min: 1, max: 1, impl: fnToYaml},
		"toJson":     {form: both, min: 1, max: 1, impl: fnToJson},
		"changed":    {form: asFunction, min: 1, max: 1, lazy: lazyFrom(0), impl: fnChanged},
		"changedAny": {form: asFunction, min: 1, max: -1, lazy: lazyFrom(0), impl: fnChangedAny},
		"changedAll": {form: asFunction, min: 1, max: -1, lazy: lazyFrom(0), impl: fnChangedAll},
		"added":      {form: asFunction, min: 1, max: 1, lazy: lazyFrom(0), impl: fnAdded},
		"deleted":    {form: asFunction, min: 1, max: 1, lazy: lazyFrom(0), impl: fnDeleted},
		"new":        {form: asFunction, min: 1, max: 1, lazy: lazyFrom(0), impl: fnNew},
		"old":        {form: asFunction, min: 1, max: 1, lazy: lazyFrom(0), impl: fnOld},
	}
}

// FunctionNames lists the functions Cairn's yaql supports.
func FunctionNames() []string { return sortedKeys(anyMap(builtins())) }

func anyMap(m map[string]funcSpec) map[string]any {
	out := make(map[string]any, len(m))
	for k := range m {
		out[k] = nil
	}
	return out
}

// call evaluates a function call: the receiver and the eager arguments
// first, lazy ones are left to the function (as nodes in c.Args).
func (ev *evaluator) call(c *Call, dollar any) (any, error) {
	spec := ev.funcs[c.Name] // the checker made sure it exists
	if spec.impl == nil {
		return nil, ev.errorf(c, "unknown function %s", c.Name)
	}
	nodes := c.Args
	if c.Recv != nil {
		nodes = append([]Node{c.Recv}, c.Args...)
	}
	args := make([]any, len(nodes))
	for i, n := range nodes {
		if spec.lazy != nil && spec.lazy(i) {
			continue
		}
		if _, isPair := n.(*Pair); isPair {
			continue
		}
		v, err := ev.eval(n, dollar)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return spec.impl(ev, c, dollar, args)
}

// argNodes returns the call's argument nodes with the receiver first.
func argNodes(c *Call) []Node {
	if c.Recv != nil {
		return append([]Node{c.Recv}, c.Args...)
	}
	return c.Args
}

func (ev *evaluator) typeErr(c *Call, what string, got any) error {
	return ev.errorf(c, "%s: expected %s, got a %s", c.Name, what, typeName(got))
}

func fnGet(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	d, ok := a[0].(map[string]any)
	if !ok {
		return nil, ev.typeErr(c, "a dict", a[0])
	}
	k, ok := a[1].(string)
	if v, found := d[k]; ok && found {
		return v, nil
	}
	if len(a) == 3 {
		return a[2], nil
	}
	return nil, nil
}

func fnValues(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	d, ok := a[0].(map[string]any)
	if !ok {
		return nil, ev.typeErr(c, "a dict", a[0])
	}
	out := make([]any, 0, len(d))
	for _, k := range sortedKeys(d) {
		out = append(out, d[k])
	}
	return out, nil
}

func fnKeys(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	d, ok := a[0].(map[string]any)
	if !ok {
		return nil, ev.typeErr(c, "a dict", a[0])
	}
	out := make([]any, 0, len(d))
	for _, k := range sortedKeys(d) {
		out = append(out, k)
	}
	return out, nil
}

func fnItems(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	d, ok := a[0].(map[string]any)
	if !ok {
		return nil, ev.typeErr(c, "a dict", a[0])
	}
	out := make([]any, 0, len(d))
	for _, k := range sortedKeys(d) {
		out = append(out, []any{k, d[k]})
	}
	return out, nil
}

func fnLen(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	switch x := a[0].(type) {
	case string:
		return int64(len([]rune(x))), nil
	case []any:
		return int64(len(x)), nil
	case map[string]any:
		return int64(len(x)), nil
	}
	return nil, ev.typeErr(c, "a string, a list or a dict", a[0])
}

// iterable reads a collection argument: a list (yaql does not iterate
// dicts or strings).
func (ev *evaluator) iterable(c *Call, v any) ([]any, error) {
	if x, ok := v.([]any); ok {
		return x, nil
	}
	return nil, ev.typeErr(c, "a list", v)
}

// each runs fn on every item of the receiver with `$` bound to it.
func (ev *evaluator) each(c *Call, recv any, fn func(item any) (stop bool, err error)) error {
	list, err := ev.iterable(c, recv)
	if err != nil {
		return err
	}
	for _, item := range list {
		if err := ev.step(c); err != nil {
			return err
		}
		stop, err := fn(item)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

func fnWhere(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	pred := argNodes(c)[1]
	out := []any{}
	err := ev.each(c, a[0], func(item any) (bool, error) {
		v, err := ev.eval(pred, item)
		if err == nil && truthy(v) {
			out = append(out, item)
		}
		return false, err
	})
	return out, err
}

func fnSelect(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	sel := argNodes(c)[1]
	out := []any{}
	err := ev.each(c, a[0], func(item any) (bool, error) {
		v, err := ev.eval(sel, item)
		out = append(out, v)
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return ev.sized(c, out)
}

func fnAny(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	nodes := argNodes(c)
	found := false
	err := ev.each(c, a[0], func(item any) (bool, error) {
		if len(nodes) == 1 {
			found = true // yaql: any() without a predicate asks for any item
			return true, nil
		}
		v, err := ev.eval(nodes[1], item)
		found = err == nil && truthy(v)
		return found, err
	})
	return found, err
}

func fnAll(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	nodes := argNodes(c)
	all := true
	err := ev.each(c, a[0], func(item any) (bool, error) {
		if len(nodes) == 1 {
			all = truthy(item)
			return !all, nil
		}
		v, err := ev.eval(nodes[1], item)
		all = err == nil && truthy(v)
		return !all, err
	})
	return all, err
}

func fnFirst(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	list, err := ev.iterable(c, a[0])
	if err != nil {
		return nil, err
	}
	if len(list) > 0 {
		return list[0], nil
	}
	if len(a) == 2 {
		return a[1], nil
	}
	return nil, ev.errorf(c, "first: the collection is empty")
}

func fnLast(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	list, err := ev.iterable(c, a[0])
	if err != nil {
		return nil, err
	}
	if len(list) > 0 {
		return list[len(list)-1], nil
	}
	if len(a) == 2 {
		return a[1], nil
	}
	return nil, ev.errorf(c, "last: the collection is empty")
}

func fnDistinct(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	list, err := ev.iterable(c, a[0])
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, e := range list {
		if err := ev.step(c); err != nil {
			return nil, err
		}
		if !contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// fnFlatten flattens nested lists all the way down (dicts and strings are
// items).
func fnFlatten(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	list, err := ev.iterable(c, a[0])
	if err != nil {
		return nil, err
	}
	out := []any{}
	var walk func(l []any) error
	walk = func(l []any) error {
		for _, e := range l {
			if err := ev.step(c); err != nil {
				return err
			}
			if inner, ok := e.([]any); ok {
				if err := walk(inner); err != nil {
					return err
				}
				continue
			}
			out = append(out, e)
		}
		return nil
	}
	if err := walk(list); err != nil {
		return nil, err
	}
	return ev.sized(c, out)
}

func fnToSet(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	list, err := ev.iterable(c, a[0])
	if err != nil {
		return nil, err
	}
	if err := ev.hashable(c, list); err != nil {
		return nil, err
	}
	return setOf(list), nil
}

// hashable refuses what a Python set cannot hold.
func (ev *evaluator) hashable(c *Call, list []any) error {
	for _, e := range list {
		switch e.(type) {
		case []any, map[string]any:
			return ev.errorf(c, "%s: a set cannot hold a %s", c.Name, typeName(e))
		}
	}
	return nil
}

func fnIntersect(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	left, err := ev.iterable(c, a[0])
	if err != nil {
		return nil, err
	}
	right, err := ev.iterable(c, a[1])
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, e := range left {
		if err := ev.step(c); err != nil {
			return nil, err
		}
		if contains(right, e) && !contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func fnMatches(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, ev.typeErr(c, "a string", a[0])
	}
	pattern, ok := a[1].(string)
	if !ok {
		return nil, ev.typeErr(c, "a pattern (a string)", a[1])
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, ev.errorf(c, "matches: invalid pattern %q: %v", pattern, err)
	}
	return re.MatchString(s), nil
}

// fnConcat joins strings (concat("a", $.b)) or, called on a list, lists.
func fnConcat(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	if c.Recv != nil {
		out := []any{}
		for _, x := range a {
			l, ok := x.([]any)
			if !ok {
				return nil, ev.typeErr(c, "lists", x)
			}
			out = append(out, l...)
		}
		return ev.sized(c, out)
	}
	var b strings.Builder
	for _, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, ev.typeErr(c, "strings", x)
		}
		b.WriteString(s)
		if b.Len() > ev.size {
			return ev.sized(c, b.String())
		}
	}
	return b.String(), nil
}

func fnCoalesce(ev *evaluator, c *Call, dollar any, _ []any) (any, error) {
	for _, n := range c.Args {
		v, err := ev.eval(n, dollar)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// fnSwitch returns the value of the first pair whose condition is truthy,
// or null.
func fnSwitch(ev *evaluator, c *Call, dollar any, _ []any) (any, error) {
	for _, n := range c.Args {
		p := n.(*Pair) // the checker made sure
		cond, err := ev.eval(p.Key, dollar)
		if err != nil {
			return nil, err
		}
		if truthy(cond) {
			return ev.eval(p.Value, dollar)
		}
	}
	return nil, nil
}

// fnDict builds a dict from key => value pairs or from a list of
// [key, value] pairs.
func fnDict(ev *evaluator, c *Call, dollar any, a []any) (any, error) {
	out := map[string]any{}
	for i, n := range c.Args {
		if p, ok := n.(*Pair); ok {
			k, v, err := ev.pair(p, dollar)
			if err != nil {
				return nil, err
			}
			out[k] = v
			continue
		}
		if err := ev.putPairs(c, out, a[i]); err != nil {
			return nil, err
		}
	}
	return ev.sized(c, out)
}

// putPairs adds a list of [key, value] pairs to out.
func (ev *evaluator) putPairs(c *Call, out map[string]any, v any) error {
	list, ok := v.([]any)
	if !ok {
		return ev.typeErr(c, "a list of [key, value] pairs", v)
	}
	for _, item := range list {
		kv, ok := item.([]any)
		if !ok || len(kv) != 2 {
			return ev.typeErr(c, "[key, value] pairs", item)
		}
		k, ok := kv[0].(string)
		if !ok {
			return ev.typeErr(c, "string keys", kv[0])
		}
		out[k] = kv[1]
	}
	return nil
}

// fnSet is dict.set(key, value), dict.set(other) and dict.set(k => v), or
// called as a function set(a, b, …): a set of its arguments.
func fnSet(ev *evaluator, c *Call, dollar any, a []any) (any, error) {
	if c.Recv == nil {
		for _, n := range c.Args {
			if _, isPair := n.(*Pair); isPair {
				return nil, ev.errorf(n, "set(…) takes values; write dict(k => v) for a dict")
			}
		}
		if err := ev.hashable(c, a); err != nil {
			return nil, err
		}
		return setOf(a), nil
	}
	d, ok := a[0].(map[string]any)
	if !ok {
		return nil, ev.typeErr(c, "a dict", a[0])
	}
	out := make(map[string]any, len(d)+1)
	for k, v := range d {
		out[k] = v
	}
	nodes := argNodes(c)
	switch {
	case len(nodes) == 3:
		if _, isPair := nodes[1].(*Pair); !isPair {
			k, ok := a[1].(string)
			if !ok {
				return nil, ev.typeErr(c, "a string key", a[1])
			}
			out[k] = a[2]
			return out, nil
		}
		fallthrough
	default:
		for i, n := range nodes[1:] {
			if p, ok := n.(*Pair); ok {
				k, v, err := ev.pair(p, dollar)
				if err != nil {
					return nil, err
				}
				out[k] = v
				continue
			}
			m, ok := a[i+1].(map[string]any)
			if !ok {
				return nil, ev.typeErr(c, "a dict or key => value pairs", a[i+1])
			}
			for k, v := range m {
				out[k] = v
			}
		}
	}
	return ev.sized(c, out)
}

func fnToJson(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	var b strings.Builder
	if err := pyJSON(&b, a[0], ev.size); err != nil {
		return nil, ev.errorf(c, "toJson: %v", err)
	}
	return b.String(), nil
}

func fnToYaml(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	s, err := toYAML(a[0])
	if err != nil {
		return nil, ev.errorf(c, "toYaml: %v", err)
	}
	return ev.sized(c, s)
}

// pyJSON writes v as Python's json.dumps(v, sort_keys=True) does: ", " and
// ": " separators, non-ASCII escaped.
func pyJSON(b *strings.Builder, v any, limit int) error {
	if b.Len() > limit {
		return fmt.Errorf("%w: the text exceeds %d bytes", ErrLimit, limit)
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		fmt.Fprintf(b, "%d", x)
	case float64:
		b.WriteString(pyFloat(x))
	case string:
		pyString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := pyJSON(b, e, limit); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			pyString(b, k)
			b.WriteString(": ")
			if err := pyJSON(b, x[k], limit); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot encode a %s", typeName(v))
	}
	return nil
}

// pyFloat formats a float as Python's repr does.
func pyFloat(f float64) string {
	raw, err := json.Marshal(f)
	if err != nil {
		return "NaN"
	}
	s := string(raw)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func pyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e && r <= 0xffff:
			fmt.Fprintf(b, `\u%04x`, r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
