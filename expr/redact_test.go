package expr

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestRedactForms(t *testing.T) {
	const secret = `p@ss "w<o>rd"&é/+?=`
	jsonHTML, err := json.Marshal("x" + secret + "y")
	require.NoError(t, err)
	tests := []struct {
		name string
		text string
	}{
		{name: "verbatim", text: "token " + secret + " end"},
		{name: "strconv.Quote", text: "config: " + strconv.Quote(secret)},
		{name: "strconv.QuoteToASCII", text: strconv.QuoteToASCII(secret)},
		{name: "json.Marshal inside a string", text: string(jsonHTML)},
		{name: "json without HTML escaping", text: `{"k":"` + strings.NewReplacer(`"`, `\"`).Replace(secret) + `"}`},
		{name: "URL query escaping", text: "https://h/?p=" + url.QueryEscape(secret)},
		{name: "URL path escaping", text: "https://h/" + url.PathEscape(secret)},
		{name: "base64", text: "data " + base64.StdEncoding.EncodeToString([]byte(secret))},
		{name: "base64 url alphabet", text: base64.URLEncoding.EncodeToString([]byte(secret))},
		{name: "base64 unpadded", text: base64.RawStdEncoding.EncodeToString([]byte(secret))},
		{name: "basic auth (offset 1)", text: "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+secret))},
		{name: "base64 offset 2", text: base64.StdEncoding.EncodeToString([]byte("ab" + secret + "tail"))},
		{name: "base64 offset 0 followed by more", text: base64.StdEncoding.EncodeToString([]byte(secret + "tail bytes"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.text, []string{secret})
			assert.Contains(t, got, Redacted)
			for _, form := range formsOf(secret) {
				if len(form) >= minEmbeddedBase64 {
					assert.NotContains(t, got, form)
				}
			}
			// No escaped form of the secret's distinctive middle is left.
			assert.NotContains(t, got, "w<o>rd")
			assert.NotContains(t, got, `w\u003co\u003erd`)
		})
	}
}

func TestRedactKeepsOtherText(t *testing.T) {
	assert.Equal(t, "a [redacted] b", Redact("a hunter22 b", []string{"hunter22", ""}))
	assert.Equal(t, "nothing secret", Redact("nothing secret", []string{"hunter22"}))
	assert.Equal(t, "text", Redact("text", nil))
	// The longer secret goes first: no fragment of it is left.
	assert.Equal(t, "[redacted]", Redact("abcdef", []string{"abc", "abcdef"}))
	// A short secret's base64 is redacted whole but not as a fragment.
	assert.Equal(t, "[redacted] QUJD", Redact(base64.StdEncoding.EncodeToString([]byte("xy"))+" QUJD", []string{"xy"}))
}

func TestRedactValue(t *testing.T) {
	const secret = `s3cr"et<value>`
	in := map[string]any{
		"plain":  "value " + secret,
		"list":   []any{"a", secret, int64(3), map[string]any{"deep": secret}},
		secret:   true,
		"labels": map[string]string{"k": secret},
		"args":   []string{"--password=" + secret},
		"n":      int64(1),
		"nil":    nil,
	}
	out := RedactValue(in, []string{secret})
	for name, render := range map[string]func(any) ([]byte, error){
		"json": json.Marshal,
		"yaml": yaml.Marshal,
	} {
		raw, err := render(out)
		require.NoError(t, err, name)
		text := string(raw)
		assert.NotContains(t, text, "s3cr", name)
		assert.Contains(t, text, Redacted, name)
	}
	m := out.(map[string]any)
	assert.Equal(t, "value [redacted]", m["plain"])
	assert.Equal(t, []any{"a", Redacted, int64(3), map[string]any{"deep": Redacted}}, m["list"])
	assert.Equal(t, true, m[Redacted])
	assert.Equal(t, map[string]string{"k": Redacted}, m["labels"])
	assert.Equal(t, []string{"--password=[redacted]"}, m["args"])
	assert.Equal(t, int64(1), m["n"])
	// The input is left as it was.
	assert.Equal(t, "value "+secret, in["plain"])
	// Rendering first and redacting after would have missed the secret:
	// JSON escapes its quote and angle brackets.
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), secret)
	assert.NotContains(t, Redact(string(raw), []string{secret}), "s3cr")
}
