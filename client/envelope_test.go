package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestWithParams(t *testing.T) {
	p := model.ApplyParams{EnvRefs: map[string]string{"SITE": "prod"}, Secrets: map[string]string{"DB_PASSWORD": "pw"}}
	t.Run("no parameters: the document as it is", func(t *testing.T) {
		doc := &Document{Data: []byte("kind: File\n"), Format: "yaml"}
		out, err := withParams(doc, model.ApplyParams{})
		require.NoError(t, err)
		assert.Same(t, doc, out)
	})
	t.Run("YAML goes as a string", func(t *testing.T) {
		out, err := withParams(&Document{Data: []byte("kind: File\n"), Format: "yaml"}, p)
		require.NoError(t, err)
		assert.Equal(t, "json", out.Format)
		assert.JSONEq(t, `{"package": "kind: File\n", "envRefs": {"SITE": "prod"}, "secrets": {"DB_PASSWORD": "pw"}}`, string(out.Data))
	})
	t.Run("JSON goes as JSON", func(t *testing.T) {
		out, err := withParams(&Document{Data: []byte(`[{"kind": "File"}]`), Format: "json"}, p)
		require.NoError(t, err)
		var env model.ApplyEnvelope
		require.NoError(t, json.Unmarshal(out.Data, &env))
		assert.JSONEq(t, `[{"kind": "File"}]`, string(env.Package))
	})
	t.Run("no document: parameters alone, for the stack's URLs", func(t *testing.T) {
		out, err := withParams(nil, model.ApplyParams{Vars: map[string]any{"region": "eu"}, Verbose: true})
		require.NoError(t, err)
		assert.Equal(t, "json", out.Format)
		assert.JSONEq(t, `{"vars": {"region": "eu"}, "verbose": true}`, string(out.Data))
		none, err := withParams(nil, model.ApplyParams{})
		require.NoError(t, err)
		assert.Nil(t, none)
	})
	t.Run("Jsonnet is refused", func(t *testing.T) {
		_, err := withParams(&Document{Data: []byte(`{}`), Format: "jsonnet"}, p)
		require.ErrorContains(t, err, "evaluate it to JSON")
	})
}
