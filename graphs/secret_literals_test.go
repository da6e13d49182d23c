package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A user's password written in the package, or as an expression that
// reads no secret, is a warning at the field's line; one given as a
// secret (a secretRef, or an expression reading one) is not. The
// documents stay valid: the apply is what refuses them.
func TestLiteralPasswordsWarn(t *testing.T) {
	tests := []struct {
		name     string
		password string
		want     string
	}{
		{name: "a literal hash", password: `"$6$salt$hash"`, want: "t.yaml:4:13: spec.password: password is written in the package: give it as a secret"},
		{name: "an expression reading the environment", password: `'{{ env "HASH" }}'`, want: "t.yaml:4:13: spec.password: password is an expression that reads no secret"},
		{name: "a secretRef", password: `{secretRef: {key: DEPLOY_HASH}}`},
		{name: "an expression reading a secret", password: `'{{ secret "DEPLOY_HASH" }}'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "kind: user\nmetadata: {name: deploy}\nspec:\n  password: " + tt.password + "\n"
			docs, err := Parse(Options{}, Source{Name: "t.yaml", Data: []byte(src)})
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, docs.Warnings)
				return
			}
			require.Len(t, docs.Warnings, 1)
			assert.Contains(t, docs.Warnings[0].Error(), tt.want)
		})
	}
}
