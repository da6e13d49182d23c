package graphs

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hostile documents are refused with an error naming the limit; none may
// hang, crash or exhaust memory (a hang fails the test by its timeout).
func TestHostileDocuments(t *testing.T) {
	billionLaughs := func() []byte {
		var b bytes.Buffer
		b.WriteString("kind: stage\nmetadata: {name: lol}\nspec:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(&b, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		}
		return b.Bytes()
	}
	deepBlock := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("kind: stage\nmetadata: {name: deep}\nspec:\n")
		for i := 0; i < n; i++ {
			b.WriteString(strings.Repeat(" ", i+1) + "a:\n")
		}
		b.WriteString(strings.Repeat(" ", n+1) + "1\n")
		return b.Bytes()
	}
	tests := []struct {
		name   string
		opts   Options
		srcs   []Source
		wantIn string
	}{
		{"billion laughs", Options{}, []Source{{Name: "bomb.yaml", Data: billionLaughs()}},
			"bomb.yaml:9:42: document has more than 500000 values after expanding alias *a4"},
		{"small alias budget", Options{MaxNodes: 50}, []Source{{Name: "a.yaml", Data: []byte("kind: stage\nmetadata: {name: a}\nspec:\n  x: &x [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  y: [*x, *x, *x, *x, *x]\n")}},
			"a.yaml:5:15: document has more than 50 values after expanding alias *x"},
		{"10k-deep flow nesting in YAML", Options{}, []Source{{Name: "deep.yaml", Data: []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))}},
			"deep.yaml:1:101: values are nested more than 100 levels deep"},
		{"100k-deep flow nesting in YAML", Options{}, []Source{{Name: "deep.yaml", Data: []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000))}},
			"deep.yaml: invalid YAML: exceeded max depth of 10000"},
		{"deep block nesting in YAML", Options{}, []Source{{Name: "deep.yaml", Data: deepBlock(1000)}},
			"deep.yaml:103:101: values are nested more than 100 levels deep"},
		{"deep nesting through aliases", Options{MaxDepth: 6}, []Source{{Name: "a.yaml", Data: []byte("kind: stage\nmetadata: {name: a}\nspec:\n  x: &x [[[1]]]\n  y: [[*x]]\n")}},
			"a.yaml:5:8: values are nested more than 6 levels deep (through alias *x)"},
		{"10k-deep JSON", Options{}, []Source{{Name: "deep.json", Data: []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))}},
			"deep.json:1:101: document refused: values are nested more than 100 levels deep"},
		{"50 MB document", Options{}, []Source{{Name: "big.yaml", Data: bytes.Repeat([]byte("# padding\n"), 5<<20)}},
			"big.yaml: document is 50 MiB, larger than the limit of 10 MiB"},
		{"sources adding up past the total", Options{MaxBytes: 1 << 20, MaxTotalBytes: 2 << 20}, []Source{
			{Name: "a.yaml", Data: bytes.Repeat([]byte("#\n"), 512<<10)},
			{Name: "b.yaml", Data: bytes.Repeat([]byte("#\n"), 512<<10)},
			{Name: "c.yaml", Data: bytes.Repeat([]byte("#\n"), 512<<10)},
		}, "c.yaml: documents add up to more than the limit of 2 MiB"},
		{"too many values for the parser", Options{}, []Source{{Name: "many.yaml", Data: []byte("[" + strings.Repeat("1,", 600000) + "1]")}},
			"many.yaml:1: document has too many lines and list items (600001, limit 500000)"},
		{"too many JSON values", Options{MaxNodes: 1000}, []Source{{Name: "many.json", Data: []byte("[" + strings.Repeat("1,", 2000) + "1]")}},
			"many.json:1:2000: document refused: document has too many values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.opts, tt.srcs...)
			require.Error(t, err, "error = %v\nwant one containing %q", truncate(err, 600), tt.wantIn)
			require.Contains(t, err.Error(), tt.wantIn, "error = %v\nwant one containing %q", truncate(err, 600), tt.wantIn)
		})
	}
}

func truncate(err error, n int) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Large documents inside the limits are read in full: a JSON document on
// one line (column positions must not cost quadratic time) and a graph of
// 10,000 tasks.
func TestLargeDocumentsWithinLimits(t *testing.T) {
	var oneLine bytes.Buffer
	oneLine.WriteString(`{"kind": "stage", "metadata": {"name": "wide"}, "spec": {"l": [`)
	for i := 0; i < 400000; i++ {
		if i > 0 {
			oneLine.WriteByte(',')
		}
		oneLine.WriteString("1")
	}
	oneLine.WriteString(`], "é": "x"}}`)
	docs, err := Parse(Options{}, Source{Name: "wide.json", Data: oneLine.Bytes()})
	require.NoError(t, err, "%v", truncate(err, 300))
	l := docs.Package.Resources[0].Spec["l"].([]any)
	require.Len(t, l, 400000, "list has %d values", len(l))

	g, err := ParseGraph(Options{}, Source{Name: "10k.yaml", Data: tenKTasks(10000)})
	require.NoError(t, err, "%v", truncate(err, 300))
	require.Len(t, g.Tasks, 10000, "graph has %d tasks", len(g.Tasks))
	require.NotEqual(t, 0, g.Tasks[9999].Pos.Line, "graph has %d tasks", len(g.Tasks))
}
