package yaql

import "strings"

// Tag is how a yaql expression is kept in a string field that holds other
// condition forms too (model.Task.Condition): `condition: {yaql_exp: "e"}`
// is kept as "yaql_exp: e". Neither Cairn's templates nor the legacy
// syntax can read that string, so the forms never mix.
const Tag = "yaql_exp:"

// Tagged returns src in its tagged form.
func Tagged(src string) string { return Tag + " " + src }

// Untag returns the expression of a tagged string and whether it was one.
func Untag(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, Tag)
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, " "), true
}

// Value reads a value written {yaql_exp: "…"}: a dict whose only key is
// yaql_exp, with a string.
func Value(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false
	}
	s, ok := m["yaql_exp"].(string)
	return s, ok
}
