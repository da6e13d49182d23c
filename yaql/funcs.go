package yaql

import (
	"maps"
	"slices"
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
func FunctionNames() []string { return slices.Sorted(maps.Keys(builtins())) }

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
	return ev.memoCall(c, spec, dollar, args)
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
