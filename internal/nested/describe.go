package nested

import (
	"encoding/json"
	"fmt"
)

// Describe names the JSON type of v for messages, with its article:
// "null", "a boolean", "a number", "a string", "a list", "an object".
// Every Go number type and json.Number is a number; a value of any other
// type is named by its Go type ("[]string").
func Describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
