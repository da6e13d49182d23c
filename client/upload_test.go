package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// checkYAMLParts: the parts cover the stream exactly, in order, each
// starts at the line it says, and none is over size unless it holds one
// document.
func checkYAMLParts(t *testing.T, data []byte, size int, parts []Part) {
	t.Helper()
	var joined []byte
	for _, p := range parts {
		start := len(joined)
		require.Equal(t, testenv.YAMLLines(data[:start]), p.Line, "part at byte %d", start)
		if len(p.Data) > size {
			chunks := 0
			model.SplitYAML(p.Data, func(model.YAMLChunk) bool { chunks++; return true })
			require.Equal(t, 1, chunks, "a part over %d bytes holds more than one document", size)
		}
		joined = append(joined, p.Data...)
	}
	require.Equal(t, string(data), string(joined))
}

func TestSplitDocumentYAML(t *testing.T) {
	var b strings.Builder
	b.WriteString("# a comment before the first document\n")
	for i := range 50 {
		fmt.Fprintf(&b, "---\nkind: File\nmetadata: {name: f%d}\nspec: {path: /f%d, content: %q}\n", i, i, strings.Repeat("x", i*10))
	}
	data := []byte(b.String())
	for _, size := range []int{64, 300, 1000, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			parts, err := SplitDocument(Document{Data: data, Format: "yaml"}, size)
			require.NoError(t, err)
			checkYAMLParts(t, data, size, parts)
			if size < len(data) {
				require.Greater(t, len(parts), 1)
			}
			docs := 0
			for _, p := range parts {
				require.Equal(t, docs, p.Document, "the index of the part's first document")
				docs += bytes.Count(p.Data, []byte("---\n"))
			}
		})
	}
}

// A JSON list is cut between its elements, each part laid out so that
// every element keeps its line and column.
func TestSplitDocumentJSON(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 30 {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		fmt.Fprintf(&b, `{"kind": "File", "metadata": {"name": "f%d"}, "spec": {"path": "/f%d", "content": "é%s"}}`, i, i, strings.Repeat("y", i))
	}
	b.WriteString("\n]\n")
	data := []byte(b.String())
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(data, &want))
	parts, err := SplitDocument(Document{Data: data, Format: "json"}, 400)
	require.NoError(t, err)
	require.Greater(t, len(parts), 3)
	var got []json.RawMessage
	for _, p := range parts {
		var elems []json.RawMessage
		require.NoError(t, json.Unmarshal(p.Data, &elems), "%s", p.Data)
		require.Equal(t, len(got), p.Document)
		for _, e := range elems {
			// Where the element is in the part, placed by the part's Line,
			// is where it is in the list.
			at := bytes.Index(p.Data, e)
			line := p.Line + bytes.Count(p.Data[:at], []byte("\n"))
			col := at - bytes.LastIndexByte(p.Data[:at], '\n')
			orig := bytes.Index(data, e)
			assert.Equal(t, 1+bytes.Count(data[:orig], []byte("\n")), line, "line of %s", e)
			assert.Equal(t, orig-bytes.LastIndexByte(data[:orig], '\n'), col, "column of %s", e)
		}
		got = append(got, elems...)
	}
	require.Equal(t, want, got)
}

// FuzzSplitDocument: whatever the input, cutting never fails on YAML, the
// YAML parts cover the input exactly, and a JSON list's parts hold its
// elements in order.
func FuzzSplitDocument(f *testing.F) {
	f.Add([]byte("a: 1\n---\nb: 2\n...\n%YAML 1.2\n---\nc: [1,\n 2]\n"), 8)
	f.Add([]byte(`[{"a": 1}, {"b": [2, 3]}, "x", null]`), 5)
	f.Add([]byte("--- |\n  ---\n---\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size <= 0 || size > 1<<16 {
			return
		}
		parts, err := SplitDocument(Document{Data: data, Format: "yaml"}, size)
		require.NoError(t, err)
		checkYAMLParts(t, data, size, parts)

		var want []json.RawMessage
		if json.Unmarshal(data, &want) != nil {
			return
		}
		parts, err = SplitDocument(Document{Data: data, Format: "json"}, size)
		require.NoError(t, err)
		if len(data) <= size || bytes.TrimSpace(data)[0] != '[' {
			require.Len(t, parts, 1)
			return
		}
		var got []json.RawMessage
		for _, p := range parts {
			var elems []json.RawMessage
			require.NoError(t, json.Unmarshal(p.Data, &elems), "%q", p.Data)
			got = append(got, elems...)
		}
		require.Equal(t, len(want), len(got))
		for i := range want {
			require.JSONEq(t, string(want[i]), string(got[i]))
		}
	})
}
