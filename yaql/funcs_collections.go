// The collection functions: dicts read, lists filtered, mapped and reduced.

package yaql

import (
	"maps"
	"slices"
)

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
	for _, k := range slices.Sorted(maps.Keys(d)) {
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
	for _, k := range slices.Sorted(maps.Keys(d)) {
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
	for _, k := range slices.Sorted(maps.Keys(d)) {
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
