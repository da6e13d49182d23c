package nested

import (
	"errors"
	"slices"
)

// SkipChildren, returned by a Walk visitor or a Map function, leaves the
// value's entries unvisited: a reference such as {envRef: …} is one value,
// not an object to walk into.
var SkipChildren = errors.New("skip the children of this value")

// SkipAll, returned by a Walk visitor, ends the walk without an error: the
// visitor found what it was looking for.
var SkipAll = errors.New("skip the rest of the walk")

// Walk calls visit for v, at the path named root, and then for every value
// inside it, depth first: a map's entries in key order, a list's in index
// order. Only map[string]any and []any are walked into; anything else is a
// leaf. visit returning SkipChildren skips the value's entries, SkipAll
// ends the walk, and any other error ends it and is returned.
//
// Cost: one sorted key list per map of two keys or more; paths are only
// rendered when the visitor asks.
func Walk(v any, root string, visit func(p Path, v any) error) error {
	w := walker{visit: visit, path: Root(root)}
	if err := w.walk(v); err != nil && err != SkipAll {
		return err
	}
	return nil
}

type walker struct {
	visit func(Path, any) error
	path  Path
}

func (w *walker) walk(v any) error {
	if err := w.visit(w.path, v); err != nil {
		if err == SkipChildren {
			return nil
		}
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		var buf [8]string
		for _, k := range sortedKeys(x, buf[:]) {
			w.path.pushKey(k)
			err := w.walk(x[k])
			w.path.pop()
			if err != nil {
				return err
			}
		}
	case []any:
		for i, item := range x {
			w.path.pushIndex(i)
			err := w.walk(item)
			w.path.pop()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// sortedKeys lists a map's keys in order, into buf when it is large
// enough. It is slices.Sorted(maps.Keys(m)) without the iterator's
// allocations, which a walk would pay at every map.
func sortedKeys(m map[string]any, buf []string) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
