package yaql

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input makes the parsers or the evaluator panic or run
// away; a parsed expression evaluates (to a value or an error) within its
// limits.
func FuzzParse(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	for _, s := range []string{
		"settings:common.debug.value == true and not cluster:status != 'new'",
		"(((((", "[{a => [1, {b => $}]}]", "$.a.b.c[0][1]['x']", "switch(true => changedAny($.a, $.b))",
	} {
		f.Add(s)
	}
	data := map[string]any{
		"a": map[string]any{"b": []any{int64(1), "x", nil, map[string]any{"c": true}}},
		"l": []any{"controller", "compute"},
	}
	f.Fuzz(func(t *testing.T, src string) {
		in := Input{New: data, Old: data, HasOld: true, Models: map[string]any{"settings": data},
			Limits: Limits{Steps: 10_000, Size: 1 << 16}}
		if x, err := Parse(src); err == nil {
			_, _ = x.Eval(in)
		} else {
			require.IsType(t, (*Error)(nil), err, "Parse(%q) returned %T, want *Error", src, err)
		}
		if x, err := ParseLegacy(src); err == nil {
			_, _ = x.Eval(in)
		}
		_ = IsLegacy(src)
	})
}
