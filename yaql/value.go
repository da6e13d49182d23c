package yaql

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"

	"github.com/cairn-io/cairn/internal/nested"
)

// Normalize converts JSON-like Go data into the forms the evaluator works
// on: map[string]any, []any, string, int64, float64 (integral floats become
// int64, as a JSON number without a fraction reads in Python), bool and
// nil. Other types are an error naming the path.
func Normalize(v any) (any, error) { return nested.MapAnyOrder(v, "$", normalizeOne) }

// normalizeOne is Normalize's nested.Map function: it converts a scalar,
// and a map or list of another Go type into map[string]any or []any for
// Map to walk into.
func normalizeOne(p nested.Path, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return x, nested.SkipChildren
	case int:
		return int64(x), nested.SkipChildren
	case int32:
		return int64(x), nested.SkipChildren
	case uint64:
		if x > math.MaxInt64 {
			return float64(x), nested.SkipChildren
		}
		return int64(x), nested.SkipChildren
	case float32:
		return normFloat(float64(x)), nested.SkipChildren
	case float64:
		return normFloat(x), nested.SkipChildren
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nested.SkipChildren
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: invalid number %s", p, x)
		}
		return normFloat(f), nested.SkipChildren
	case map[string]any, []any:
		return x, nil
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, nested.SkipChildren
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out, nested.SkipChildren
	}
	// Other maps and slices (map[any]any from some YAML decoders, typed
	// slices) go through reflection.
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[fmt.Sprint(it.Key().Interface())] = it.Value().Interface()
		}
		return out, nil
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nested.SkipChildren
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(rv.Uint()), nested.SkipChildren
	case reflect.String:
		return rv.String(), nested.SkipChildren
	case reflect.Bool:
		return rv.Bool(), nested.SkipChildren
	}
	return nil, fmt.Errorf("%s: unsupported value of type %T", p, v)
}

func normFloat(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return f
}

// typeName names a value's type the way messages speak of it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// truthy is Python's truth value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// number reads a number; Python counts booleans as 0 and 1.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// equal is Python's ==: deep, numbers by value (True == 1).
func equal(a, b any) bool {
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && na == nb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// contains reports whether list holds v.
func contains(list []any, v any) bool {
	for _, e := range list {
		if equal(e, v) {
			return true
		}
	}
	return false
}

// canonical is a value's JSON form with sorted keys, for ordering sets.
func canonical(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// setOf returns the distinct values of list in a canonical order (Python's
// sets have none; both sides of a comparison sort them the same way).
func setOf(list []any) []any {
	out := make([]any, 0, len(list))
	seen := map[string]bool{}
	for _, e := range list {
		k := canonical(e)
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return canonical(out[i]) < canonical(out[j]) })
	return out
}
