// The functions that build and choose values: dict, set, switch, coalesce.

package yaql

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
