package nested

// Map returns a copy of v rebuilt by fn. fn is called for v, at the path
// named root, and returns the value to put in its place. When that value
// is a map[string]any or []any, Map copies it, calling fn for each entry
// in turn (a map's in key order, so side effects such as collected errors
// come out in a stable order); anything else is used as fn returned it.
// fn returning SkipChildren with a value uses that value as it is, not
// walked into (a resolved reference, a value fn copied itself); any other
// error stops Map, which returns it.
//
// Cost: a new map or slice for every map and list, one sorted key list
// per map of two keys or more, and one call of fn per value.
func Map(v any, root string, fn func(p Path, v any) (any, error)) (any, error) {
	m := mapper{fn: fn, path: Root(root), sorted: true}
	return m.value(v)
}

// MapAnyOrder is Map visiting a map's entries in the map's own order: for
// a function whose calls have no effect to order (a pure conversion such
// as canonicalisation), it saves sorting the keys of every map, which is
// most of a small map's cost.
func MapAnyOrder(v any, root string, fn func(p Path, v any) (any, error)) (any, error) {
	m := mapper{fn: fn, path: Root(root)}
	return m.value(v)
}

type mapper struct {
	fn     func(Path, any) (any, error)
	path   Path
	sorted bool
}

func (m *mapper) value(v any) (any, error) {
	out, err := m.fn(m.path, v)
	if err == SkipChildren {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	switch x := out.(type) {
	case map[string]any:
		cp := make(map[string]any, len(x))
		if !m.sorted {
			for k, e := range x {
				if err := m.entry(cp, k, e); err != nil {
					return nil, err
				}
			}
			return cp, nil
		}
		var buf [8]string
		for _, k := range sortedKeys(x, buf[:]) {
			if err := m.entry(cp, k, x[k]); err != nil {
				return nil, err
			}
		}
		return cp, nil
	case []any:
		cp := make([]any, len(x))
		for i, item := range x {
			m.path.pushIndex(i)
			e, err := m.value(item)
			m.path.pop()
			if err != nil {
				return nil, err
			}
			cp[i] = e
		}
		return cp, nil
	}
	return out, nil
}

// entry maps one entry of a map into cp.
func (m *mapper) entry(cp map[string]any, k string, v any) error {
	m.path.pushKey(k)
	e, err := m.value(v)
	m.path.pop()
	if err != nil {
		return err
	}
	cp[k] = e
	return nil
}
