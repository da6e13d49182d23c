package providers

import (
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
)

// parseExtDeps reads an external spec's dependency aliases. As written,
// each alias names its target (a string, which the graph orders and
// checks); once the step resolved them, each is the record the program
// is sent: {name, type, state}. Only the records are kept.
func parseExtDeps(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, configErrorf(kinds.DepAliasAttr, "want an object of alias: resource name, got %s", nested.Describe(v))
	}
	var out map[string]any
	for alias, d := range m {
		switch x := d.(type) {
		case string:
			if x == "" {
				return nil, configErrorf(kinds.DepAliasAttr+"."+alias, "empty resource name")
			}
		case map[string]any:
			if out == nil {
				out = map[string]any{}
			}
			out[alias] = x
		default:
			return nil, configErrorf(kinds.DepAliasAttr+"."+alias, "want a resource name, got %s", nested.Describe(d))
		}
	}
	return out, nil
}
