package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

func TestUnwrapEnvelope(t *testing.T) {
	src := func(format graphs.Format, data string) *graphs.Source {
		return &graphs.Source{Name: requestSource, Data: []byte(data), Format: format}
	}
	t.Run("a package without envelope passes as it is", func(t *testing.T) {
		for _, in := range []*graphs.Source{
			src(graphs.FormatYAML, "package: x\n"),
			src(graphs.FormatJSON, `[{"kind": "Directory"}]`),
			src(graphs.FormatJSON, `{"kind": "Directory", "metadata": {"name": "etc"}}`),
			nil,
		} {
			out, _, p, err := unwrapEnvelope(in)
			require.NoError(t, err)
			assert.Same(t, in, out)
			assert.True(t, p.Empty())
		}
	})
	t.Run("JSON package with parameters", func(t *testing.T) {
		out, _, p, err := unwrapEnvelope(src(graphs.FormatJSON, `{"package": [{"kind": "Directory"}], "envRefs": {"SITE": "prod"}, "secrets": {"DB_PASSWORD": "pw"}}`))
		require.NoError(t, err)
		assert.Equal(t, graphs.FormatJSON, out.Format)
		assert.JSONEq(t, `[{"kind": "Directory"}]`, string(out.Data))
		assert.Equal(t, map[string]string{"SITE": "prod"}, p.EnvRefs)
		assert.Equal(t, map[string]string{"DB_PASSWORD": "pw"}, p.Secrets)
	})
	t.Run("YAML package in a string", func(t *testing.T) {
		out, _, p, err := unwrapEnvelope(src(graphs.FormatJSON, `{"package": "kind: Directory\n", "envRefs": {"SITE": "prod"}}`))
		require.NoError(t, err)
		assert.Equal(t, graphs.FormatYAML, out.Format)
		assert.Equal(t, "kind: Directory\n", string(out.Data))
		assert.Equal(t, "prod", p.EnvRefs["SITE"])
	})
	t.Run("parameters without a package: the stack's URLs", func(t *testing.T) {
		out, _, p, err := unwrapEnvelope(src(graphs.FormatJSON, `{"envRefs": {"SITE": "prod"}, "vars": {"region": "eu"}, "verbose": true}`))
		require.NoError(t, err)
		assert.Nil(t, out)
		assert.Equal(t, model.ApplyParams{EnvRefs: map[string]string{"SITE": "prod"}, Vars: map[string]any{"region": "eu"}, Verbose: true}, p)
		out, _, p, err = unwrapEnvelope(src(graphs.FormatJSON, `{"verbose": true}`))
		require.NoError(t, err)
		assert.Nil(t, out)
		assert.True(t, p.Verbose)
	})
	t.Run("an upload instead of a package", func(t *testing.T) {
		out, upload, p, err := unwrapEnvelope(src(graphs.FormatJSON, `{"upload": "0123abcd", "envRefs": {"SITE": "prod"}}`))
		require.NoError(t, err)
		assert.Nil(t, out)
		assert.Equal(t, "0123abcd", upload)
		assert.Equal(t, map[string]string{"SITE": "prod"}, p.EnvRefs)
		for _, body := range []string{`{"upload": "x", "package": []}`, `{"upload": ""}`, `{"upload": 3}`} {
			_, _, _, err := unwrapEnvelope(src(graphs.FormatJSON, body))
			var apiErr *Error
			require.ErrorAs(t, err, &apiErr, body)
			assert.Equal(t, 400, apiErr.Status, body)
		}
	})
	t.Run("an object with any other key is a package", func(t *testing.T) {
		in := src(graphs.FormatJSON, `{"kind": "Directory", "vars": {"a": 1}}`)
		out, _, p, err := unwrapEnvelope(in)
		require.NoError(t, err)
		assert.Same(t, in, out)
		assert.True(t, p.Empty())
	})
	bad := []struct{ name, body, want string }{
		{"bad parameters without a package", `{"envRefs": {"CAIRN_CODEC_KEY": "x"}}`, "CAIRN_"},
		{"parameters of the wrong type without a package", `{"verbose": "yes"}`, "verbose"},
		{"null package", `{"package": null}`, `"package" is empty`},
		{"empty string package", `{"package": "  "}`, `"package" is empty`},
		{"number package", `{"package": 3}`, "must be a JSON document or a string"},
		{"unknown field", `{"package": [], "env": {}}`, `unknown field "env"`},
		{"env value not a string", `{"package": [], "envRefs": {"SITE": 1}}`, "envRefs"},
		{"secrets not an object", `{"package": [], "secrets": ["x"]}`, "secrets"},
		{"reserved env key", `{"package": [], "envRefs": {"CAIRN_CODEC_KEY": "x"}}`, "CAIRN_"},
		{"empty key", `{"package": [], "secrets": {"": "x"}}`, "empty key"},
		{"trailing garbage", `{"package": []} {}`, ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := unwrapEnvelope(src(graphs.FormatJSON, tc.body))
			if tc.name == "trailing garbage" {
				// Not an object the JSON decoder reads whole: left to the
				// package parser, which names the error with its line.
				return
			}
			var apiErr *Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusBadRequest, apiErr.Status)
			assert.Contains(t, apiErr.Message, tc.want)
		})
	}
	t.Run("a secret value is never quoted", func(t *testing.T) {
		_, _, _, err := unwrapEnvelope(src(graphs.FormatJSON, `{"package": [], "secrets": {"K": ["hunter2-value"]}}`))
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "hunter2-value")
	})
}

func TestApplyEnvelopeHTTP(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	t.Run("secrets without a sealing key are refused", func(t *testing.T) {
		var st struct{ ID string }
		s.do(http.MethodPost, "/v1/stacks", `{"name": "x"}`, "Content-Type", "application/json").expect(t, http.StatusCreated).json(t, &st)
		body := `{"package": "kind: Directory\nmetadata: {name: etc}\nspec: {path: /srv/x}\n", "secrets": {"DB_PASSWORD": "pw"}}`
		for _, route := range []string{"apply", "dry-run"} {
			r := s.do(http.MethodPost, "/v1/stacks/"+st.ID+"/"+route, body, "Content-Type", "application/json").expect(t, http.StatusUnprocessableEntity)
			assert.Contains(t, string(r.Body), "CAIRN_CODEC_KEY")
			assert.NotContains(t, string(r.Body), `"pw"`)
		}
	})
	t.Run("a bad envelope is a 400 naming the field", func(t *testing.T) {
		var st struct{ ID string }
		s.do(http.MethodPost, "/v1/stacks", `{"name": "y"}`, "Content-Type", "application/json").expect(t, http.StatusCreated).json(t, &st)
		r := s.do(http.MethodPost, "/v1/stacks/"+st.ID+"/apply", `{"package": [], "envRefs": {"SITE": 3}}`, "Content-Type", "application/json").expect(t, http.StatusBadRequest)
		assert.Contains(t, string(r.Body), "envRefs")
	})
}
