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
	m := mapper{fn: fn, path: Root(root)}
	return m.value(v)
}

type mapper struct {
	fn   func(Path, any) (any, error)
	path Path
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
		var buf [8]string
		for _, k := range sortedKeys(x, buf[:]) {
			m.path.pushKey(k)
			e, err := m.value(x[k])
			m.path.pop()
			if err != nil {
				return nil, err
			}
			cp[k] = e
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
