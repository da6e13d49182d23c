package providers

import (
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/cairn-io/cairn/expr"
)

// schemaLeaves are e's innermost causes that excused does not drop; an
// anyOf or oneOf that matched no branch is dropped whole when one branch
// has nothing left. excused nil drops nothing. Its cost is one walk over
// the causes.
func schemaLeaves(e *jsonschema.ValidationError, excused func(*jsonschema.ValidationError) bool) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		if excused != nil && excused(e) {
			return nil
		}
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	_, anyOf := e.ErrorKind.(*kind.AnyOf)
	oneOf, isOneOf := e.ErrorKind.(*kind.OneOf)
	branches := anyOf || (isOneOf && len(oneOf.Subschemas) == 0)
	for _, c := range e.Causes {
		leaves := schemaLeaves(c, excused)
		if branches && len(leaves) == 0 {
			return nil
		}
		out = append(out, leaves...)
	}
	return out
}

// awaitsValue reports whether e is about a value not known before the
// step runs: its instance location passes through an expression or ref of
// config, or it judges the value itself (its type, pattern, enum…) and
// that value holds one. A missing or unknown property, or a count of
// items or properties, is a fact of what is written and stands.
func awaitsValue(e *jsonschema.ValidationError, config any) bool {
	v := config
	for _, tok := range e.InstanceLocation {
		if expr.IsDynamic(v) {
			return true
		}
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	switch e.ErrorKind.(type) {
	case *kind.FalseSchema:
		// The property is not allowed, whatever its value.
		return false
	case *kind.Required, *kind.DependentRequired, *kind.Dependency, *kind.AdditionalProperties,
		*kind.AdditionalItems, *kind.MinProperties, *kind.MaxProperties,
		*kind.MinItems, *kind.MaxItems, *kind.PropertyNames:
		return expr.IsDynamic(v)
	}
	return expr.HasDynamic(v)
}
