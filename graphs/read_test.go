package graphs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"trailing comma", "{\"kind\": \"directory\",\n \"metadata\": {\"name\": \"a\"},\n}",
			[]string{`x.json:3:1: invalid JSON: invalid character '}' looking for beginning of object key string`}},
		{"unexpected end", "{\"kind\": \"directory\",\n \"metadata\": {\"name\": \"a\"}",
			[]string{`x.json:2:27: invalid JSON: unexpected end of input`}},
		{"duplicate key: reported, the first kept", `{"kind": "directory", "metadata": {"name": "a"}, "spec": {"path": "/a"}, "kind": "file"}`,
			[]string{`x.json:1:74: duplicate key "kind" (first at line 1)`}},
		{"two values", `{"kind": "stage", "metadata": {"name": "a"}} {}`,
			[]string{`x.json:1:46: invalid JSON: unexpected data after the JSON value`}},
		{"bad value", "{\"a\": x}",
			[]string{`x.json:1:7: invalid JSON: invalid character 'x' looking for beginning of value`}},
		{"double comma", "[1, 2,, 3]",
			[]string{`x.json:1:7: invalid JSON: invalid character ',' looking for beginning of value`}},
		{"missing colon", "{\"kind\" \"stage\"}",
			[]string{`x.json:1:9: invalid JSON: invalid character '"' after object key`}},
		{"comments are not JSON", "// c\n{}",
			[]string{`x.json:1:1: invalid JSON: invalid character '/' looking for beginning of value`}},
		{"a string", `"text"`,
			[]string{`x.json:1:1: expected a document (an object) or a list of tasks, got a string`}},
		{"columns count characters", "{\"kind\": \"stage\", \"metadata\": {\"name\": \"é\"}, \"spec\": {}, \"x\": 1}",
			[]string{`x.json:1:58: x: unknown field "x"`}},
		{"numbers", `{"kind": "stage", "metadata": {"name": "n"}, "spec": {"big": 1e400}}`,
			[]string{`x.json:1:62: spec.big: number 1e400 is out of range`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Options{}, Source{Name: "x.json", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.want)
		})
	}
}

func TestReadJSONValues(t *testing.T) {
	src := `{"kind": "stage", "metadata": {"name": "v"}, "spec": {
  "int": 42, "neg": -7, "float": 1.5, "exp": 1e3, "huge": 18446744073709551616,
  "t": true, "f": false, "null": null, "list": [1, "a", [], {}], "esc": "a\"\u00e9\/"
}}`
	docs, err := Parse(Options{}, Source{Name: "v.json", Data: []byte(src)})
	require.NoError(t, err)
	want := map[string]any{
		"int": int64(42), "neg": int64(-7), "float": 1.5, "exp": 1000.0, "huge": 18446744073709551616.0,
		"t": true, "f": false, "null": nil, "list": []any{int64(1), "a", []any{}, map[string]any{}}, "esc": "a\"é/",
	}
	got := docs.Package.Resources[0].Spec
	assert.Equal(t, want, got, "spec")
}

func TestReadYAMLValues(t *testing.T) {
	src := `kind: stage
metadata: {name: v}
spec:
  int: 42
  hex: 0x1F
  under: 1_000
  float: 1.5
  whole: 2.0
  t: true
  yes: yes
  null: ~
  empty:
  date: 2024-01-02
  quoted: "42"
  block: |
    line 1
    line 2
  7: seven
  true: key
`
	docs, err := Parse(Options{}, Source{Name: "v.yaml", Data: []byte(src)})
	require.NoError(t, err)
	want := map[string]any{
		"int": int64(42), "hex": int64(31), "under": int64(1000), "float": 1.5, "whole": 2.0, "t": true,
		"yes": "yes", "null": nil, "empty": nil, "date": "2024-01-02", "quoted": "42",
		"block": "line 1\nline 2\n", "7": "seven", "true": "key",
	}
	got := docs.Package.Resources[0].Spec
	assert.Equal(t, want, got, "spec")
}

func TestReadYAMLAliasesAndMerges(t *testing.T) {
	src := `kind: stage
metadata: {name: a}
spec:
  base: &base {user: app, shell: /bin/sh, env: {LANG: C}}
  other: &other {shell: /bin/bash, extra: 1}
  merged:
    <<: [*base, *other]
    user: root
  copy: *base
  list: &l [1, 2]
  again: *l
`
	docs, err := Parse(Options{}, Source{Name: "m.yaml", Data: []byte(src)})
	require.NoError(t, err)
	spec := docs.Package.Resources[0].Spec
	base := map[string]any{"user": "app", "shell": "/bin/sh", "env": map[string]any{"LANG": "C"}}
	want := map[string]any{
		"base":   base,
		"other":  map[string]any{"shell": "/bin/bash", "extra": int64(1)},
		"merged": map[string]any{"user": "root", "shell": "/bin/sh", "env": map[string]any{"LANG": "C"}, "extra": int64(1)},
		"copy":   base,
		"list":   []any{int64(1), int64(2)},
		"again":  []any{int64(1), int64(2)},
	}
	assert.Equal(t, want, spec, "spec")
	// Values are copies: changing one alias's value leaves the others.
	spec["copy"].(map[string]any)["user"] = "changed"
	assert.Equal(t, "app", spec["base"].(map[string]any)["user"], "aliases share their decoded values")
}

func TestReadYAMLStructureErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"alias to its own ancestor", "kind: stage\nmetadata: {name: a}\nspec: &s {self: *s}\n",
			[]string{`y.yaml:3:17: alias *s refers to the value that contains it`}},
		{"unknown alias", "kind: stage\nmetadata: {name: a}\nspec: {x: *nope}\n",
			[]string{`y.yaml: invalid YAML: unknown anchor 'nope' referenced`}},
		{"merge of a scalar", "kind: stage\nmetadata: {name: a}\nspec:\n  <<: 3\n  a: 1\n",
			[]string{`y.yaml:4:7: merge key << needs a mapping or a list of mappings`}},
		{"tab indentation (the pkger seed as written)", "kind: Label\nmetadata:\n\tname: lucid_einstein\n",
			[]string{`y.yaml:3: invalid YAML: found character that cannot start any token`}},
		{"error in a later document keeps the earlier ones", "kind: stage\nmetadata: {name: a}\n---\nkind: [\n",
			[]string{`y.yaml:5: invalid YAML: did not find expected node content`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Options{}, Source{Name: "y.yaml", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.want)
		})
	}
}

func TestReadYAMLDocumentIndexes(t *testing.T) {
	src := `---
kind: directory
metadata: {name: a}
spec: {path: /a}
---
---
kind: directory
metadata: {name: b}
spec: {path: /b}
---
[{kind: directory, metadata: {name: c}, spec: {path: /c}}, {kind: directory, metadata: {name: d}, spec: {path: /d}}]
`
	docs, err := Parse(Options{}, Source{Name: "d.yaml", Data: []byte(src)})
	require.NoError(t, err)
	var got []string
	for _, r := range docs.Package.Resources {
		got = append(got, r.Name+"@"+r.Pos.String()+"#"+strings.Repeat("i", r.Pos.Doc))
	}
	want := []string{"a@d.yaml:2:1#", "b@d.yaml:7:1#ii", "c@d.yaml:11:2#iii", "d@d.yaml:11:60#iiii"}
	assert.Equal(t, want, got, "resources")
	// An error names its document.
	_, err = Parse(Options{}, Source{Name: "d.yaml", Data: []byte(src + "---\nkind: directory\n")})
	var es Errors
	require.True(t, asErrors(err, &es), "errors = %#v", es)
	require.Len(t, es, 2, "errors")
	assert.Equal(t, 5, es[0].Pos.Doc, "errors = %#v", es)
}

func asErrors(err error, es *Errors) bool {
	e, ok := err.(Errors)
	if ok {
		*es = e
	}
	return ok
}

func TestErrorFormatting(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Pos: model.Position{Source: "a.yaml", Line: 3, Column: 7}, Path: "spec.mode", Message: "bad"}, "a.yaml:3:7: spec.mode: bad"},
		{Error{Pos: model.Position{Source: "a.yaml", Line: 3}, Message: "bad"}, "a.yaml:3: bad"},
		{Error{Pos: model.Position{Source: "a.jsonnet"}, Path: "kind", Message: "bad"}, "a.jsonnet: kind: bad"},
		{Error{Message: "bad"}, "<input>: bad"},
	}
	for _, tt := range tests {
		got := tt.e.Error()
		assert.Equal(t, tt.want, got, "Error()")
	}
	es := Errors{
		{Pos: model.Position{Source: "b.yaml", Line: 1, Column: 1}, Message: "third"},
		{Pos: model.Position{Source: "a.yaml", Line: 9, Column: 1}, Message: "second"},
		{Pos: model.Position{Source: "a.yaml", Line: 2, Column: 5}, Message: "first"},
		{Pos: model.Position{Source: "a.yaml", Line: 9, Column: 1}, Message: "second"},
	}.Sort()
	got := es.Error()
	assert.Equal(t, "a.yaml:2:5: first\na.yaml:9:1: second\nb.yaml:1:1: third", got, "sorted")
	b, err := es[0].MarshalJSON()
	require.NoError(t, err, "json = %s, %v", b, err)
	assert.Equal(t, `{"document":"a.yaml","index":0,"line":2,"column":5,"message":"first"}`, string(b), "json = %s, %v", b, err)
	require.NoError(t, (Errors{}).Err(), "Err() does not tell empty from not")
	assert.Error(t, es.Err(), "Err() does not tell empty from not")
}
