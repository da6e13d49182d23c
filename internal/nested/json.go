package nested

import (
	"encoding/json"
	"fmt"
)

// ViaJSON is v in the form it takes on the wire: marshalled to JSON and
// decoded back into generic values (maps, slices, float64 numbers). A
// value that does not make that trip is its fmt text, and ok is false.
// Cost: one marshal and one unmarshal of v.
func ViaJSON(v any) (out any, ok bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v), false
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprint(v), false
	}
	return out, true
}
