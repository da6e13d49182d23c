package providers

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchSpec is a spec of the size an http or external resource carries:
// nested objects and lists of mixed scalars, as YAML and JSON decode them.
func benchSpec() map[string]any {
	items := make([]any, 20)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("item-%d", i), "port": i, "weight": float64(i) / 2, "on": i%2 == 0}
	}
	return map[string]any{
		"url":     "http://example.test/api",
		"headers": map[string]string{"Accept": "application/json"},
		"body":    map[string]any{"name": "b", "items": items, "tags": []string{"a", "b"}},
		"mode":    "0644",
	}
}

func BenchmarkNormalizeValue(b *testing.B) {
	spec := benchSpec()
	b.ReportAllocs()
	for b.Loop() {
		_ = NormalizeValue(spec)
	}
}

func BenchmarkEqualValues(b *testing.B) {
	x, y := benchSpec(), benchSpec()
	require.True(b, EqualValues(x, y))
	b.ReportAllocs()
	for b.Loop() {
		_ = EqualValues(x, y)
	}
}
