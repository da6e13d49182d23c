package yaql

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every yaql expression of fuel-library checks without error.
func TestFuelLibraryExpressionsCheck(t *testing.T) {
	exprs := fuelExpressions(t)
	require.GreaterOrEqual(t, len(exprs), 200, "fuel-library has 206 yaql expressions")
	for _, e := range exprs {
		_, err := Parse(e.Source)
		assert.NoError(t, err, "%s %s: %s", e.File, e.Path, e.Source)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"changd($.x)", 1, 1, "unknown function changd; did you mean \"changed\"?"},
		{"$.a and\n  nosuch($.b)", 2, 3, "unknown function nosuch"},
		{"$.a.frobnicate()", 1, 5, "unknown function frobnicate"},
		{"$.roles.changed()", 1, 9, "changed is a function: write changed(…), not ….changed(…)"},
		{"where($.roles, $ = 1)", 1, 1, "where is a method: write ….where(…)"},
		{"$.get()", 1, 3, "get takes 1 to 2 arguments, got 0"},
		{"len(1, 2)", 1, 1, "len takes 1 argument, got 2"},
		{"changedAny()", 1, 1, "changedAny takes at least 1 argument, got 0"},
		{"switch($.a, true => 1)", 1, 8, "switch takes condition => value pairs"},
		{"$.get(a => 1)", 1, 9, "=> belongs in a dict"},
		{"$x", 1, 1, "unknown variable $x (known: $, $node, $common)"},
		{"$.a = ", 1, 7, "unexpected end of expression"},
		{"($.a", 1, 5, `expected ")", got end of expression`},
		{"'abc", 1, 1, "unterminated string"},
		{"$.a # b", 1, 5, "unexpected character '#'"},
		{"$.a =~ 'x'", 1, 5, "operator =~ is not supported (use matches)"},
		{"$?.a", 1, 2, "operator ?. is not supported"},
		{"$.a -> $.b", 1, 5, "operator -> is not supported"},
		{"get($.a, 'b')", 1, 1, "get is a method: write ….get(…)"},
		{"$.a.", 1, 5, "expected a name after '.', got end of expression"},
		{"{1}", 1, 2, "a dict holds key => value pairs"},
		{"$.a $.b", 1, 5, "unexpected $"},
		{"99999999999999999999", 1, 1, "number 99999999999999999999 is out of range"},
		{"and", 1, 1, `unexpected "and"`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := Parse(tt.src)
			require.Error(t, err)
			var ye *Error
			require.ErrorAs(t, err, &ye)
			assert.Equal(t, tt.line, ye.Line, "line")
			assert.Equal(t, tt.col, ye.Column, "column")
			assert.Contains(t, ye.Msg, tt.msg)
		})
	}
}

func TestParseBounds(t *testing.T) {
	deep := ""
	for range 300 {
		deep += "("
	}
	_, err := Parse(deep + "1")
	require.ErrorContains(t, err, "nests deeper than 200 levels")

	long := make([]byte, MaxSource+1)
	for i := range long {
		long[i] = '1'
	}
	_, err = Parse(string(long))
	require.ErrorContains(t, err, "more than the 65536 allowed")
}

func TestEval(t *testing.T) {
	data := map[string]any{
		"uid":   "1",
		"roles": []any{"controller", "mongo"},
		"a":     map[string]any{"b": int64(2), "n": nil, "list": []any{}},
		"nodes": map[string]any{
			"node-1": map[string]any{"uid": "1", "node_roles": []any{"controller"}},
			"node-2": map[string]any{"uid": "2", "node_roles": []any{"compute"}},
		},
	}
	in := Input{New: data, Vars: map[string]any{"node": map[string]any{"uid": "1"}}}
	tests := []struct {
		src  string
		want any
	}{
		{"$.uid", "1"},
		{"$.a.b + 1", int64(3)},
		{"$.a.n = null", true},
		{"len($.a.list)", int64(0)},
		{"$.get('missing', 'd')", "d"},
		{"$.a.get('n', 'd')", nil},
		{"'mongo' in $.roles", true},
		{"$.roles.any($.matches('^mon'))", true},
		{"$.nodes.values().where('compute' in $.node_roles).uid", []any{"2"}},
		{"$.nodes.values().select($.uid).first()", "1"},
		{"$node.uid = $.uid", true},
		{"switch($.a.b > 5 => 'big', true => 'small')", "small"},
		{"[1, [2, [3]]].flatten()", []any{int64(1), int64(2), int64(3)}},
		{"dict(a => 1) + {b => 2}", map[string]any{"a": int64(1), "b": int64(2)}},
		{"coalesce($.get('missing'), $.a.n, 0)", int64(0)},
		{"not $.a.list", true},
		{"$.roles and 'yes'", "yes"},
		{"7 / 2", int64(3)},
		{"concat('a', $.uid)", "a1"},
		{"$.roles.toJson()", `["controller", "mongo"]`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			x, err := Parse(tt.src)
			require.NoError(t, err)
			got, err := x.Eval(in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEvalErrors(t *testing.T) {
	in := Input{New: map[string]any{"a": map[string]any{"b": int64(1), "n": nil}, "s": "x"}}
	tests := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"$.missing.b", 1, 2, `no key "missing" (read an optional key with get('missing'))`},
		{"$.a.n.b", 1, 6, "cannot read .b of a null"},
		{"$.a['zz']", 1, 4, `no key "zz" in the dict`},
		{"[1][3]", 1, 4, "index 3 is out of range (length 1)"},
		{"1 <\n 'a'", 1, 3, "cannot compare a number with a string"},
		{"$.s.get('x')", 1, 5, "get: expected a dict, got a string"},
		{"[].first()", 1, 4, "first: the collection is empty"},
		{"1 / 0", 1, 3, "division by zero"},
		{"'x'.matches('(')", 1, 5, "matches: invalid pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			x, err := Parse(tt.src)
			require.NoError(t, err)
			_, err = x.Eval(in)
			var ye *Error
			require.ErrorAs(t, err, &ye)
			assert.Equal(t, tt.line, ye.Line, "line")
			assert.Equal(t, tt.col, ye.Column, "column")
			assert.Contains(t, ye.Msg, tt.msg)
		})
	}
}

// A hostile expression stops at the limits instead of running away.
func TestEvalLimits(t *testing.T) {
	big := make([]any, 2000)
	for i := range big {
		big[i] = int64(i)
	}
	in := Input{Vars: map[string]any{"common": big}, Limits: Limits{Steps: 100_000, Size: 1 << 16}}
	x, err := Parse("$common.select($common.select($common.len())).len()")
	require.NoError(t, err)
	_, err = x.Eval(in)
	require.ErrorIs(t, err, ErrLimit)

	x, err = Parse("$.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l + $.l")
	require.NoError(t, err)
	_, err = x.Eval(Input{New: map[string]any{"l": big}, Limits: Limits{Size: 50_000}})
	require.ErrorIs(t, err, ErrLimit)
}

// Fuel's change functions against a previous run, and with none.
func TestChangeFunctions(t *testing.T) {
	old := map[string]any{"x": int64(1), "same": "s", "l": []any{"a", "b"}, "d": map[string]any{"k1": int64(1)}}
	cur := map[string]any{"x": int64(2), "same": "s", "l": []any{"b", "c"}, "d": map[string]any{"k1": int64(1), "k2": int64(2)}}
	tests := []struct {
		src            string
		withOld, first any
	}{
		{"changed($.x)", true, true},
		{"changed($.same)", false, true},
		{"changedAny($.same, $.x)", true, true},
		{"changedAll($.same, $.x)", false, true},
		{"changed($.get('missing'))", false, true},
		{"added($.l)", []any{"c"}, []any{"b", "c"}},
		{"deleted($.l)", []any{"a"}, []any{}},
		{"added($.d)", map[string]any{"k2": int64(2)}, map[string]any{"k1": int64(1), "k2": int64(2)}},
		{"old($.x)", int64(1), nil},
		{"new($.x)", int64(2), int64(2)},
		{"len(old($))", int64(4), int64(0)},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			x, err := Parse(tt.src)
			require.NoError(t, err)
			got, err := x.Eval(Input{New: cur, Old: old, HasOld: true})
			require.NoError(t, err)
			assert.Equal(t, tt.withOld, got, "with a previous run")
			got, err = x.Eval(Input{New: cur})
			require.NoError(t, err)
			assert.Equal(t, tt.first, got, "first run")
		})
	}
}
