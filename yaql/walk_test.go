package yaql

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWalkValuesFindsEveryExpressionWithItsPath(t *testing.T) {
	params := map[string]any{
		"plain": "x",
		"data":  map[string]any{"yaql_exp": "$.a"},
		"items": []any{1, map[string]any{"b": map[string]any{"yaql_exp": "$.b"}}},
		"not":   map[string]any{"yaql_exp": 3},
	}
	var got [][2]string
	WalkValues(params, "parameters", func(path, src string) { got = append(got, [2]string{path, src}) })
	assert.Equal(t, [][2]string{{"parameters.data", "$.a"}, {"parameters.items[1].b", "$.b"}}, got)
	assert.True(t, HasValue(params))
	assert.False(t, HasValue(map[string]any{"a": []any{"yaql_exp"}, "b": map[string]any{"yaql_exp": "x", "c": 1}}),
		"a dict with another key is not an expression")
}
