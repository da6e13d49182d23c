package expr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
)

// Redacted replaces secret values in text.
const Redacted = "[redacted]"

// minEmbeddedBase64 is the shortest run of base64 characters taken as a
// secret's trace inside a longer base64 text (the secret not at the start
// of what was encoded, as in HTTP basic auth's base64 of "user:password").
// Shorter runs would redact unrelated text too often.
const minEmbeddedBase64 = 8

// Redact replaces every occurrence of each non-empty secret value in s by
// "[redacted]", in the forms a secret takes when it is printed: verbatim,
// escaped as a Go or JSON string (strconv.Quote, json.Marshal, with or
// without HTML escaping), URL-encoded (query and path escaping), and
// base64-encoded (standard and URL alphabets, padded or not, and the
// characters that encode it at any offset inside a longer base64 text).
// Longer forms are replaced first, so one secret inside another cannot
// leave a fragment behind.
func Redact(s string, secretValues []string) string {
	if s == "" || len(secretValues) == 0 {
		return s
	}
	for _, f := range secretForms(secretValues) {
		s = strings.ReplaceAll(s, f, Redacted)
	}
	return s
}

// RedactValue returns a copy of v (decoded JSON: maps, slices, strings,
// numbers) in which every string, map key included, is redacted, so a
// structured value can be rendered (JSON, YAML, a report) without a
// secret surviving in an escaped form the renderer chose.
func RedactValue(v any, secretValues []string) any {
	if len(secretValues) == 0 {
		return v
	}
	return redactValue(v, secretForms(secretValues))
}

func redactValue(v any, forms []string) any {
	out, _ := nested.Map(v, "", func(_ nested.Path, v any) (any, error) {
		return redactOne(v, forms)
	})
	return out
}

// redactOne redacts one value of a document: a string, the keys of a map
// (Map redacts its values), or a map or list of strings whole.
func redactOne(v any, forms []string) (any, error) {
	switch x := v.(type) {
	case string:
		return replaceForms(x, forms), nested.SkipChildren
	case map[string]any:
		renamed := false
		for k := range x {
			if replaceForms(k, forms) != k {
				renamed = true
				break
			}
		}
		if !renamed {
			return x, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[replaceForms(k, forms)] = e
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[replaceForms(k, forms)] = replaceForms(e, forms)
		}
		return out, nested.SkipChildren
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = replaceForms(e, forms)
		}
		return out, nested.SkipChildren
	}
	return v, nil
}

func replaceForms(s string, forms []string) string {
	for _, f := range forms {
		s = strings.ReplaceAll(s, f, Redacted)
	}
	return s
}

// secretForms lists the printed forms of the non-empty secret values,
// each once, longest first.
func secretForms(values []string) []string {
	set := stringSet{}
	for _, v := range values {
		if v == "" {
			continue
		}
		for _, f := range formsOf(v) {
			if f != "" {
				set.add(f)
			}
		}
	}
	forms := set.sorted()
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	return forms
}

// formsOf lists how v may appear in text.
func formsOf(v string) []string {
	forms := []string{
		v,
		unquote(strconv.Quote(v)),
		unquote(strconv.QuoteToASCII(v)),
		unquote(jsonString(v, true)),
		unquote(jsonString(v, false)),
		url.QueryEscape(v),
		url.PathEscape(v),
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(v)))
		raw := enc.WithPadding(base64.NoPadding)
		forms = append(forms, raw.EncodeToString([]byte(v)))
		for offset := range 3 {
			if core := embeddedBase64(raw, v, offset); len(core) >= minEmbeddedBase64 {
				forms = append(forms, core)
			}
		}
	}
	return forms
}

// embeddedBase64 is the run of characters that encodes v, and nothing
// else, when v follows offset other bytes in what was encoded: the
// characters whose six bits all come from v.
func embeddedBase64(enc *base64.Encoding, v string, offset int) string {
	buf := make([]byte, offset+len(v))
	copy(buf[offset:], v)
	text := enc.EncodeToString(buf)
	first := (8*offset + 5) / 6     // first character wholly inside v
	last := 8*(offset+len(v))/6 - 1 // last character wholly inside v
	if first > last || last >= len(text) {
		return ""
	}
	return text[first : last+1]
}

func jsonString(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// unquote strips the quotes of a quoted string.
func unquote(q string) string {
	if len(q) >= 2 {
		return q[1 : len(q)-1]
	}
	return ""
}
