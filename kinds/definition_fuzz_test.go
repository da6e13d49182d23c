package kinds

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// kindSeeds are the kind definitions the project ships, one document each.
func kindSeeds(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, file := range []string{"../examples/platform/kinds/platform.yaml", "../graphs/testdata/parse/pkger_kinds.yaml"} {
		data, err := os.ReadFile(filepath.FromSlash(file))
		require.NoError(f, err)
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				f.Fatalf("%s: %v", file, err)
			}
			if doc["kind"] != DefinitionKind {
				continue
			}
			b, err := json.Marshal(doc)
			require.NoError(f, err)
			out = append(out, b)
		}
	}
	require.NotEmpty(f, out, "no kind definitions among the seeds")
	return out
}

// FuzzKindDefinition reads arbitrary kind definitions (JSON, as documents
// reach ParseKindDefinition once decoded), adds the valid ones to a
// catalogue (compiling their schemas) and validates an arbitrary spec
// against them: whatever comes in, errors are returned, never a panic, and
// a definition that parses is either added or refused with an error.
func FuzzKindDefinition(f *testing.F) {
	specs := []string{`{"name": "x"}`, `{}`, `{"name": {"envRef": {"key": "N"}}}`, `{"name": 5, "extra": [1, {"a": null}]}`, `[]`}
	for i, def := range kindSeeds(f) {
		f.Add(def, []byte(specs[i%len(specs)]))
	}
	f.Add([]byte(`{"kind": "Kind", "metadata": {"name": "K"}, "spec": {"base": "http", "schema": {"$ref": "#/definitions/x"}}}`), []byte(`{}`))
	f.Add([]byte(`{"kind": "Kind", "metadata": {"name": "K"}, "spec": {"base": "file", "schema": {"type": "object", "pattern": "(("}}}`), []byte(`{"path": "/x"}`))
	f.Add([]byte(`{"kind": "Kind", "metadata": {"name": "K"}, "spec": {"base": "file", "schema": {"$ref": "http://example.com/s.json"}}}`), []byte(`{}`))
	f.Add([]byte(`{"kind": "Kind", "metadata": {"name": "file"}, "spec": {"base": "group"}}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, def, spec []byte) {
		if len(def) > 16<<10 || len(spec) > 16<<10 {
			return
		}
		var doc map[string]any
		if json.Unmarshal(def, &doc) != nil || doc == nil {
			return
		}
		k, err := ParseKindDefinition(doc)
		if err != nil {
			require.NotEmpty(t, err.Error(), "empty error")
			return
		}
		cat := Builtin().Clone()
		if err := cat.Add(k); err != nil {
			require.NotEmpty(t, err.Error(), "empty error")
			return
		}
		_, ok := cat.Lookup(k.Name)
		require.True(t, ok, "kind %q added but not found", k.Name)
		var inst map[string]any
		if json.Unmarshal(spec, &inst) != nil || inst == nil {
			return
		}
		for _, e := range cat.ValidateSpec(k.Name, inst) {
			require.NotEmpty(t, e.Message, "spec error without message at %q", e.Path)
		}
	})
}
