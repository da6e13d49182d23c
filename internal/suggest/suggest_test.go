package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	known := []string{"content", "contentBase64", "changed", "changedAny", "mode", "path"}
	tests := []struct {
		name, want string
	}{
		{"contnet", "content"},       // a transposition is one edit
		{"Content", "content"},       // case does not count
		{"chnged", "changed"},        // one deletion
		{"changedany", "changedAny"}, // exact but for case
		{"mod", "mode"},              // three letters: one edit allowed
		{"xy", ""},                   // two letters: never a suggestion
		{"somethingelse", ""},        // nothing close
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Closest(tt.name, known), tt.name)
	}
}

func TestHintWordsTheSuggestionOnce(t *testing.T) {
	known := []string{"content", "mode"}
	assert.Equal(t, `; did you mean "content"?`, Hint("contnet", known))
	assert.Equal(t, "", Hint("somethingelse", known), "no suggestion, no hint")
	assert.Equal(t, `; did you mean "mode"?`, Mean("mode"))
	assert.Equal(t, "", Mean(""))
}
