package providers

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// TestSchemaErrorsAwaitingValues: a config_schema error located at or
// below a value still holding an expression or ref waits for the run;
// a missing or unknown property, or a wrong static value beside such a
// value, is an error before anything runs.
func TestSchemaErrorsAwaitingValues(t *testing.T) {
	sch, err := compileJSONSchemaDoc("https://external.cairn.invalid/config.json", map[string]any{
		"type": "object", "required": []any{"name", "zone"}, "additionalProperties": false,
		"properties": map[string]any{
			"name":   map[string]any{"type": "string", "pattern": "^[a-z]+$"},
			"zone":   map[string]any{"type": "string", "enum": []any{"eu", "us"}},
			"size":   map[string]any{"type": "integer"},
			"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"disk": map[string]any{"type": "object", "required": []any{"id"},
				"properties": map[string]any{"id": map[string]any{"type": "string"}}},
			"port":    map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"const": "auto"}}},
			"legacy":  false,
			"servers": map[string]any{"type": "array", "maxItems": 1, "items": map[string]any{"type": "string"}},
		},
	})
	require.NoError(t, err)
	zone := "{{ deps.disk.state.zone }}"
	cases := []struct {
		name   string
		config map[string]any
		want   string // "" when nothing is an error yet
	}{
		{"expression at a typed field", map[string]any{"name": "www", "zone": zone, "size": "{{ vars.size }}"}, ""},
		{"expression breaking a pattern", map[string]any{"name": "www-{{ vars.env }}", "zone": "eu"}, ""},
		{"ref at a typed field", map[string]any{"name": "www", "zone": map[string]any{"envRef": map[string]any{"key": "ZONE"}}}, ""},
		{"expression for a whole object", map[string]any{"name": "www", "zone": "eu", "disk": "{{ deps.disk.state }}"}, ""},
		{"expression in one branch of anyOf", map[string]any{"name": "www", "zone": "eu", "port": "{{ vars.port }}"}, ""},
		{"missing required beside an expression", map[string]any{"zone": zone}, "at /: missing property 'name'"},
		{"unknown property beside an expression", map[string]any{"name": "www", "zone": zone, "colour": "red"}, "at /: additional properties 'colour' not allowed"},
		{"static wrong value beside an expression", map[string]any{"name": "www", "zone": zone, "size": "big"}, "at /size: got string, want integer"},
		{"missing required inside an object beside an expression", map[string]any{"name": "www", "zone": zone, "disk": map[string]any{"kind": "{{ vars.kind }}"}}, "at /disk: missing property 'id'"},
		{"a property not allowed whatever its value", map[string]any{"name": "www", "zone": "eu", "legacy": "{{ vars.legacy }}"}, "at /legacy: not allowed here"},
		{"too many items though one is an expression", map[string]any{"name": "www", "zone": "eu", "servers": []any{"a", "{{ vars.b }}"}}, "at /servers: maxItems"},
		{"static wrong value in an object beside an expression", map[string]any{"name": "www", "zone": zone, "labels": map[string]any{"a": "{{ vars.a }}", "b": 2}}, "at /labels/b: got number, want string"},
	}
	p := message.NewPrinter(language.English)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := NormalizeValue(tc.config)
			verr := sch.Validate(config)
			require.Error(t, verr, "the schema alone refuses it")
			what, ok := describeSchemaError(verr, func(e *jsonschema.ValidationError) bool { return awaitsValue(e, config) }, p)
			if tc.want == "" {
				assert.False(t, ok, "nothing is an error yet: %s", what)
				return
			}
			require.True(t, ok)
			assert.Contains(t, what, tc.want)
			all, ok := describeSchemaError(verr, nil, p)
			require.True(t, ok)
			assert.Contains(t, all, tc.want)
		})
	}
}
