package stepdata

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/expr"
)

// A structured change value is redacted before it is rendered: JSON would
// escape the secret's quote and angle brackets, and a redaction of the
// rendered text would miss it.
func TestShortenRedactsStructuredValues(t *testing.T) {
	const secret = `to"k<en>`
	v := map[string]any{"auth": map[string]any{"token": secret}, "list": []any{"x", secret}}
	got := Shorten(v, []string{secret}, 1000)
	s, ok := got.(string)
	assert.True(t, ok)
	assert.NotContains(t, s, "k\\u003cen")
	assert.NotContains(t, s, `to\"k`)
	assert.Contains(t, s, expr.Redacted)
	assert.Equal(t, `{"auth":{"token":"[redacted]"},"list":["x","[redacted]"]}`, s)
}
