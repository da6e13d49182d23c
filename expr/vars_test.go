package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeploysterSpelling: deps.ALIAS and vars.NAME without the dot read
// what .deps and .vars read, and Vars and Scan see both spellings.
func TestDeploysterSpelling(t *testing.T) {
	c := Context{
		Deps: map[string]map[string]any{"disk": {"state": map[string]any{"zone": "europe-west1-b"}}},
		Vars: map[string]any{"region": "europe-west1"},
	}
	cases := []struct{ src, want string }{
		{"{{ deps.disk.state.zone }}", "europe-west1-b"},
		{"{{ .deps.disk.state.zone }}", "europe-west1-b"},
		{"{{ vars.region }}/{{ .vars.region }}", "europe-west1/europe-west1"},
	}
	for _, tc := range cases {
		got, _, err := ResolveValue(tc.src, c)
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, got, tc.src)
	}
	_, _, err := ResolveValue("{{ vars.zone }}", c)
	require.Error(t, err, "a missing var is an error, not an empty value")

	spec := map[string]any{"a": "{{ vars.region }}", "b": `{{ index .vars "size" }}`, "c": "{{ .vars.name }} {{ deps.disk.state.zone }}"}
	assert.Equal(t, []string{"name", "region", "size"}, Vars(spec))
	_, _, deps := Scan(spec)
	assert.Equal(t, []string{"disk"}, deps)
}
