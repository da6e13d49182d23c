package nested

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Text is a value as a message or report shows it: a string as it is,
// anything else as its JSON, or fmt's text when it has none.
func Text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// Cut shortens s to limit characters, its last one "…" when cut.
func Cut(s string, limit int) string {
	if utf8.RuneCountInString(s) > limit {
		return string([]rune(s)[:limit-1]) + "…"
	}
	return s
}
