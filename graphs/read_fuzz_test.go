package graphs

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// fuzzSeeds adds every fixture of testdata/parse with the given
// extensions to the corpus, plus extra inline seeds.
func fuzzSeeds(f *testing.F, exts []string, extra ...string) {
	for _, ext := range exts {
		files, _ := filepath.Glob(filepath.Join("testdata", "parse", "*"+ext))
		for _, file := range files {
			data, err := os.ReadFile(file)
			require.NoError(f, err)
			f.Add(data)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// checkFuzzResult holds for every input: Parse returns Documents and, on
// failure, Errors that name the source and lie inside it.
func checkFuzzResult(t *testing.T, name string, data []byte, docs *Documents, err error) {
	t.Helper()
	require.NotNil(t, docs, "no documents returned (err %v)", err)
	require.NotNil(t, docs.Package, "no documents returned (err %v)", err)
	require.NotNil(t, docs.Catalogue, "no documents returned (err %v)", err)
	if err == nil {
		return
	}
	var es Errors
	require.ErrorAs(t, err, &es, "error is %T, want non-empty Errors: %v", err, err)
	require.NotEmpty(t, es, "error is %T, want non-empty Errors: %v", err, err)
	lines := testenv.YAMLLines(data)
	for _, e := range es {
		require.Equal(t, name, e.Pos.Source, "error without source or message: %#v", e)
		require.NotEmpty(t, e.Message, "error without source or message: %#v", e)
		require.GreaterOrEqual(t, e.Pos.Line, 0, "error outside the document (%d lines): %#v", lines, e)
		require.LessOrEqual(t, e.Pos.Line, lines+1, "error outside the document (%d lines): %#v", lines, e)
		require.GreaterOrEqual(t, e.Pos.Column, 0, "error outside the document (%d lines): %#v", lines, e)
	}
}

func FuzzReadYAML(f *testing.F) {
	fuzzSeeds(f, []string{".yaml"},
		"a: &a [1, 2]\nb: [*a, *a]\nc: {<<: {x: 1}, y: 2}\n",
		"- id: a\n  type: shell\n  role: '*'\n  cross-depends: [{name: /a/, policy: any}]\n  parameters: {cmd: x}\n",
		"kind: Graph\nmetadata: {type: t}\ntasks:\n- {id: x, type: group, tasks: [x], requires: [x]}\n",
		"---\n---\nkind: file\nmetadata: {name: a}\nspec: {path: /a, content: '{{ env }}'}\n",
		"kind: Kind\nmetadata: {name: K}\nspec: {base: http, wrap: body, defaults: {url: 'http://x', path: /k}}\n---\nkind: K\nmetadata: {name: k}\n",
		"x: !!binary aGVsbG8=\ny: 2001-12-14\nz: !custom 3\n? [complex]\n: key\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{MaxBytes: 64 << 10, MaxNodes: 20000}
		docs, err := Parse(opts, Source{Name: "f.yaml", Data: data, Format: FormatYAML})
		checkFuzzResult(t, "f.yaml", data, docs, err)
		_, _ = ParseGraph(Options{MaxBytes: 64 << 10, MaxNodes: 20000, Partial: true}, Source{Name: "f.yaml", Data: data, Format: FormatYAML})
	})
}

func FuzzReadJSON(f *testing.F) {
	fuzzSeeds(f, []string{".json"},
		`{"kind": "file", "metadata": {"name": "a"}, "spec": {"path": "/a", "content": "x"}, "dependsOn": ["directory/x"]}`,
		`[{"id": "a", "type": "shell", "parameters": {"cmd": "x", "n": null}, "cross-depended-by": [{"name": "b"}]}]`,
		`{"type": "t", "name": "n", "tasks": [{"id": "a", "type": "stage", "strategy": {"type": "parallel", "amount": 1e400}}]}`,
		`{"a": "\u00e9\ud800", "b": -0, "c": 1.0e-7, "d": [[[[]]]]}`,
		`{"kind": 1, "kind": 2}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{MaxBytes: 64 << 10, MaxNodes: 20000}
		docs, err := Parse(opts, Source{Name: "f.json", Data: data, Format: FormatJSON})
		checkFuzzResult(t, "f.json", data, docs, err)
		checkJSONAgainstStdlib(t, data)
		for _, partial := range []bool{false, true} {
			g, err := ParseGraph(Options{MaxBytes: 64 << 10, MaxNodes: 20000, Partial: partial}, Source{Name: "f.json", Data: data, Format: FormatJSON})
			require.NotNil(t, g, "ParseGraph returned no graph (err %v)", err)
		}
	})
}

// checkJSONAgainstStdlib holds the reader to encoding/json: the same
// inputs are valid, and valid ones decode to the same values (numbers
// compared as written; duplicate keys, where encoding/json keeps the last
// value and Cairn reports them, aside).
func checkJSONAgainstStdlib(t *testing.T, data []byte) {
	t.Helper()
	jr := &jsonReader{data: data, maxDepth: 20000, budget: 1 << 30, positions: true}
	root, err := jr.document()
	valid := json.Valid(data)
	require.Equal(t, valid, err == nil, "reader says error %v, encoding/json says valid %v, for %q", err, valid, data)
	if !valid || len(jr.problems) > 0 {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want any
	require.NoError(t, dec.Decode(&want))
	got := jsonNodeValue(root)
	require.Equal(t, numbersAsText(want), got, "reader decoded %#v, encoding/json %#v, for %q", got, want, data)
}

func jsonNodeValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = jsonNodeValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := []any{}
		for _, item := range n.Content {
			l = append(l, jsonNodeValue(item))
		}
		return l
	}
	switch n.Tag {
	case nullTag:
		return nil
	case boolTag:
		return n.Value == "true"
	case intTag, floatTag:
		return "number:" + n.Value
	}
	return n.Value
}

func numbersAsText(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			x[k] = numbersAsText(item)
		}
		return x
	case []any:
		for i, item := range x {
			x[i] = numbersAsText(item)
		}
		if x == nil {
			return []any{}
		}
		return x
	case json.Number:
		return "number:" + x.String()
	}
	return v
}

func FuzzReadJsonnet(f *testing.F) {
	fuzzSeeds(f, []string{".jsonnet"},
		`{kind: 'directory', metadata: {name: std.extVar('n')}, spec: {path: '/x'}}`,
		`local t(id) = {id: id, type: 'stage'}; [t('a'), t('b') {requires: ['a']}]`,
		"{\n  a: error 'boom',\n}",
		`[x for x in std.range(1, 10)]`,
		`local f(x) = if x == 0 then [] else [f(x - 1)]; f(5)`,
		"{a: |||\n  text [[[\n|||, b: @'q''q', c: \"\\\"\"}",
		`import 'x.libsonnet'`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			return
		}
		opts := Options{MaxBytes: 256 << 10, MaxNodes: 20000, Timeout: time.Second, JsonnetMaxStack: 100,
			ExtVars: map[string]string{"n": "x"}}
		docs, err := Parse(opts, Source{Name: "f.jsonnet", Data: data, Format: FormatJsonnet})
		checkFuzzResult(t, "f.jsonnet", data, docs, err)
	})
}

// FuzzSplitYAML: decoding a stream chunk by chunk (model.SplitYAML, as
// the reader does) reads the documents decoding it whole reads, each at
// the same line; the chunks cover the stream exactly.
func FuzzSplitYAML(f *testing.F) {
	fuzzSeeds(f, []string{".yaml"},
		"a: 1\n---\nb: 2\n...\n%YAML 1.2\n---\nc: 3\n",
		"# only a comment\n--- |\n  text\n---\n- x\n",
		"key: |\n  ---\n  not a marker inside\n---\n",
		"x: \"quoted\n---\nstill\"\n",
		"--- !tag\nv: 1\n--- [1, 2]\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		var joined []byte
		var chunked []any
		var lines []int
		ok := true
		model.SplitYAML(data, func(ch model.YAMLChunk) bool {
			require.Equal(t, len(joined), ch.Offset)
			require.Equal(t, testenv.YAMLLines(data[:ch.Offset]), ch.Line)
			joined = append(joined, ch.Data...)
			dec := yaml.NewDecoder(bytes.NewReader(ch.Data))
			for ok {
				var n yaml.Node
				err := decodeYAMLNode(dec, &n)
				if err == io.EOF {
					break
				}
				if err != nil {
					ok = false
					break
				}
				var v any
				if n.Decode(&v) != nil {
					ok = false
					break
				}
				chunked = append(chunked, v)
				lines = append(lines, ch.Line-1+n.Line)
			}
			return true
		})
		require.Equal(t, string(data), string(joined), "the chunks cover the stream")
		var whole []any
		var wholeLines []int
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			err := decodeYAMLNode(dec, &n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return // a malformed stream: each chunk reports its own errors
			}
			var v any
			if n.Decode(&v) != nil {
				return
			}
			whole = append(whole, v)
			wholeLines = append(wholeLines, n.Line)
		}
		require.True(t, ok, "a chunk of a stream that decodes whole does not decode")
		require.Equal(t, whole, chunked)
		require.Equal(t, wholeLines, lines)
	})
}
