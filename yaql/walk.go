package yaql

import "github.com/cairn-io/cairn/internal/nested"

// WalkValues calls fn for every value written {yaql_exp: "…"} inside v
// (see Value), in key order, with its path below root
// ("parameters.data.items[1]") and its source. What such a value holds is
// not walked into. Cost: one nested.Walk; a path is rendered only for a
// value found.
func WalkValues(v any, root string, fn func(path, src string)) {
	_ = nested.Walk(v, root, func(p nested.Path, v any) error {
		if src, ok := Value(v); ok {
			fn(p.String(), src)
			return nested.SkipChildren
		}
		return nil
	})
}

// HasValue reports whether v holds a value written {yaql_exp: "…"}
// anywhere; the walk ends at the first one.
func HasValue(v any) bool {
	found := false
	_ = nested.Walk(v, "", func(_ nested.Path, v any) error {
		if _, ok := Value(v); ok {
			found = true
			return nested.SkipAll
		}
		return nil
	})
	return found
}
