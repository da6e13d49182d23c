package yaql

import (
	"reflect"
	"regexp"
)

// Memo remembers, across evaluations, what an expression computed from
// large lists and dicts of unchanging data, so that the evaluations of many
// nodes over data they share (every node's `$.network_metadata.nodes`, the
// last run's data of the same execution) compute it once instead of once
// per node. Fuel's change functions compare a node's data with its last
// run's; over a cluster of N nodes, each node's data lists every node, so
// without a memo preparing N nodes costs N² steps.
//
// What is remembered is keyed by the expression's node and the identity of
// the values it read (a list or dict by its address and length, anything
// else by its value), never by the node being evaluated: a value is
// remembered only for
//
//   - a call of a function whose result depends on its arguments alone
//     and costs in proportion to them (values, keys, items, where,
//     select, any, all, distinct, flatten, toSet, intersect, concat,
//     toYaml, toJson), with no key => value pairs, whose lazy arguments
//     (a where's predicate) read only `$`, so none of $node, $common, a
//     legacy model or a change function;
//   - `.name` read over a list;
//   - the difference added() and deleted() compute;
//   - the deep comparison of two lists or dicts (changed());
//   - the compiled pattern of matches(), up to memoPatterns of them;
//   - the table of functions, which an evaluation otherwise builds anew.
//
// and only when one of those values is a list or dict of at least
// memoMin items (smaller ones cost less than the memo's own hashing).
// Evaluations through a memo give the same results and errors as without
// one: a remembered result charges the evaluation the steps it cost the
// first time (an evaluation with too few steps left computes it again, and
// fails where it would have), and a memo serves evaluations of one set of
// Limits only. Errors are not remembered.
//
// The data evaluated through a memo must not be modified while the memo
// is in use (Deployment's data never is): an address stands for its
// content. The memo keeps every value it keyed alive, so no address is
// reused while it lives. A memo is not safe for concurrent use. Cost:
// memory for each remembered result and the values it was keyed by, for
// as long as the memo lives (one preparation).
type Memo struct {
	limits Limits
	used   bool
	calls  map[memoKey]memoEntry
	equals map[[2]ident]bool
	keep   []any
	pure   map[*Call]bool
	// funcs is the function table (builtins), built once for every
	// evaluation through the memo, whatever its limits.
	funcs map[string]funcSpec
	// patterns are matches()'s compiled patterns (at most memoPatterns).
	patterns map[string]*regexp.Regexp
	// computed counts the computations remembered (calls, attributes,
	// differences and comparisons), for tests.
	computed int
}

// Len is the number of computations the memo remembers.
func (m *Memo) Len() int { return len(m.calls) + len(m.equals) }

// memoPatterns is the most compiled patterns a memo keeps: patterns are
// written in expressions, or read from data that may be large.
const memoPatterns = 256

// memoMin is the smallest list or dict a memo remembers what was computed
// from.
const memoMin = 32

// NewMemo returns an empty memo.
func NewMemo() *Memo {
	return &Memo{calls: map[memoKey]memoEntry{}, equals: map[[2]ident]bool{}, pure: map[*Call]bool{},
		patterns: map[string]*regexp.Regexp{}}
}

// ident is a value's identity: a list or dict by address and length, a
// scalar by its value.
type ident struct {
	kind uint8 // 0 scalar, 1 dict, 2 list
	p    uintptr
	n    int
	v    any // a scalar: nil, bool, int64, float64, string or undefined
}

// memoKey is one remembered computation: an expression's node, what kind
// of computation (a call, an attribute, a difference) and its inputs.
type memoKey struct {
	node Node
	op   uint8
	args [3]ident
}

const (
	opCall uint8 = iota
	opAttr
	opDiff
)

type memoEntry struct {
	result any
	steps  int
}

// identOf returns v's identity, whether it is a large list or dict, and
// whether it has one (a value of an unknown type has none).
func identOf(v any) (id ident, large, ok bool) {
	switch x := v.(type) {
	case map[string]any:
		return ident{kind: 1, p: reflect.ValueOf(x).Pointer(), n: len(x)}, len(x) >= memoMin, true
	case []any:
		return ident{kind: 2, p: reflect.ValueOf(x).Pointer(), n: len(x)}, len(x) >= memoMin, true
	case nil, bool, int64, float64, string, undefinedT:
		return ident{v: x}, false, true
	}
	return ident{}, false, false
}

// key builds the key of a computation over vals (at most three), and
// whether it is worth remembering: every value has an identity and one is
// a large list or dict.
func memoKeyOf(n Node, op uint8, vals ...any) (memoKey, bool) {
	if len(vals) > len(memoKey{}.args) {
		return memoKey{}, false
	}
	k := memoKey{node: n, op: op}
	anyLarge := false
	for i, v := range vals {
		id, large, ok := identOf(v)
		if !ok {
			return memoKey{}, false
		}
		k.args[i] = id
		anyLarge = anyLarge || large
	}
	return k, anyLarge
}

// useMemo returns the memo an evaluation with limits may use: in's, unless
// it served evaluations of other limits.
func useMemo(m *Memo, steps, size int) *Memo {
	if m == nil {
		return nil
	}
	l := Limits{Steps: steps, Size: size}
	if !m.used {
		m.limits, m.used = l, true
	}
	if m.limits != l {
		return nil
	}
	return m
}

// remember evaluates compute through the memo under key k (kept alive
// with vals): a remembered result is returned and its steps charged, when
// the evaluation has them left; otherwise compute runs, and its result is
// remembered unless it failed.
func (ev *evaluator) remember(k memoKey, vals []any, compute func() (any, error)) (any, error) {
	if e, ok := ev.memo.calls[k]; ok && ev.steps-e.steps >= 0 {
		ev.steps -= e.steps
		return e.result, nil
	}
	before := ev.steps
	v, err := compute()
	if err != nil {
		return nil, err
	}
	ev.memo.calls[k] = memoEntry{result: v, steps: before - ev.steps}
	ev.memo.computed++
	ev.memo.keep = append(ev.memo.keep, vals...)
	return v, nil
}

// memoCall evaluates a call's function over its evaluated arguments
// through the memo when it may (see Memo), else directly.
func (ev *evaluator) memoCall(c *Call, spec funcSpec, dollar any, args []any) (any, error) {
	if ev.memo == nil || !ev.memo.pureCall(c, spec) {
		return spec.impl(ev, c, dollar, args)
	}
	k, worth := memoKeyOf(c, opCall, args...)
	if !worth {
		return spec.impl(ev, c, dollar, args)
	}
	return ev.remember(k, args, func() (any, error) { return spec.impl(ev, c, dollar, args) })
}

// memoFunc reports whether a function's result depends on its arguments
// alone (and on `$` inside its lazy arguments: the items it iterates) and
// costs in proportion to their size: get, len, count, first, last and
// matches cost less than remembering them would (each node's `$` is its
// own dict, so `$.get(…)` would be remembered once per node and never
// found again).
func memoFunc(name string) bool {
	switch name {
	case "values", "keys", "items", "where", "select", "any", "all", "distinct", "flatten",
		"toSet", "intersect", "concat", "toYaml", "toJson":
		return true
	}
	return false
}

// pureCall reports (and remembers) whether c's result depends on its
// evaluated arguments alone: its function is one of memoFunc's, it takes
// no key => value pairs and its lazy arguments read only `$`.
func (m *Memo) pureCall(c *Call, spec funcSpec) bool {
	if p, ok := m.pure[c]; ok {
		return p
	}
	p := memoFunc(c.Name)
	for i, a := range argNodes(c) {
		if _, isPair := a.(*Pair); isPair {
			p = false
		}
		if spec.lazy != nil && spec.lazy(i) {
			p = p && readsOnlyDollar(a)
		}
	}
	m.pure[c] = p
	return p
}

// readsInput reports whether a function reads the evaluation's input (the
// node's data now and at its last run) rather than its arguments.
func readsInput(name string) bool {
	switch name {
	case "changed", "changedAny", "changedAll", "added", "deleted", "new", "old":
		return true
	}
	return false
}

// readsOnlyDollar reports whether n's value depends only on the `$` it is
// evaluated with: it names no variable or legacy model and calls no
// function reading the evaluation's input.
func readsOnlyDollar(n Node) bool {
	switch x := n.(type) {
	case *Lit:
		return true
	case *Var:
		return x.Name == ""
	case *Attr:
		return readsOnlyDollar(x.X)
	case *Index:
		return readsOnlyDollar(x.X) && allReadOnlyDollar(x.Args)
	case *Call:
		if readsInput(x.Name) || (x.Recv != nil && !readsOnlyDollar(x.Recv)) {
			return false
		}
		return allReadOnlyDollar(x.Args)
	case *Pair:
		return readsOnlyDollar(x.Key) && readsOnlyDollar(x.Value)
	case *Unary:
		return readsOnlyDollar(x.X)
	case *Binary:
		return readsOnlyDollar(x.X) && readsOnlyDollar(x.Y)
	case *List:
		return allReadOnlyDollar(x.Items)
	case *Dict:
		for _, p := range x.Pairs {
			if !readsOnlyDollar(p) {
				return false
			}
		}
		return true
	}
	return false // a legacy model, or a node this list does not know
}

func allReadOnlyDollar(ns []Node) bool {
	for _, n := range ns {
		if !readsOnlyDollar(n) {
			return false
		}
	}
	return true
}

// equal is Python's == (the package's equal) through the memo: lists or
// dicts at the same address are equal, and the comparison of two large
// ones is remembered.
func (ev *evaluator) equal(a, b any) bool {
	if ev.memo == nil {
		return equal(a, b)
	}
	return ev.memo.equal(a, b)
}

func (m *Memo) equal(a, b any) bool {
	ia, largeA, okA := identOf(a)
	ib, largeB, okB := identOf(b)
	if !okA || !okB || ia.kind == 0 || ia.kind != ib.kind {
		return equal(a, b)
	}
	if ia == ib {
		return true
	}
	if ia.n != ib.n {
		return false
	}
	if !largeA && !largeB {
		return m.equalItems(a, b)
	}
	k := [2]ident{ia, ib}
	if eq, ok := m.equals[k]; ok {
		return eq
	}
	eq := m.equalItems(a, b)
	m.equals[k] = eq
	m.computed++
	m.keep = append(m.keep, a, b)
	return eq
}

// equalItems compares two lists or two dicts of the same length item by
// item, through the memo.
func (m *Memo) equalItems(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y := b.([]any)
		for i := range x {
			if !m.equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y := b.(map[string]any)
		for k, v := range x {
			w, ok := y[k]
			if !ok || !m.equal(v, w) {
				return false
			}
		}
		return true
	}
	return equal(a, b)
}

// regexp compiles a matches() pattern, once per memo (and per evaluation
// without one). A compiled pattern is safe to share.
func (ev *evaluator) regexp(pattern string) (*regexp.Regexp, error) {
	if ev.memo == nil {
		return regexp.Compile(pattern)
	}
	if re, ok := ev.memo.patterns[pattern]; ok {
		return re, nil
	}
	re, err := regexp.Compile(pattern)
	if err == nil && len(ev.memo.patterns) < memoPatterns {
		ev.memo.patterns[pattern] = re
	}
	return re, err
}

// builtins is the function table, built on first use.
func (m *Memo) builtins() map[string]funcSpec {
	if m.funcs == nil {
		m.funcs = builtins()
	}
	return m.funcs
}
