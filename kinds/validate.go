package kinds

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
)

// ValidateSpec checks a resource's spec (or a Fuel task's parameters, when
// kind is a task type) against the kind's schema and rules, and returns
// every problem with paths rooted at "spec". A derived kind's spec is
// checked against its own schema, or, without one, the base spec it
// becomes. Env and secret references and "{{ … }}" expressions are accepted
// wherever a value is expected, since they are only known at run time;
// malformed references and expressions that do not parse are reported.
func (c *Catalogue) ValidateSpec(kind string, spec map[string]any) []SpecError {
	return c.ValidateAt(kind, "spec", spec)
}

// ValidateAt is ValidateSpec with paths rooted at root ("parameters" for a
// Fuel task).
func (c *Catalogue) ValidateAt(kind, root string, spec map[string]any) []SpecError {
	if spec == nil {
		spec = map[string]any{}
	}
	key := strings.ToLower(kind)
	if t, ok := c.tasks[key]; ok {
		return append(t.validator.validate(spec, root), c.hookError(t, root)...)
	}
	e, ok := c.kinds[key]
	if !ok {
		return []SpecError{{Path: "kind", Message: fmt.Sprintf("unknown kind %q%s", kind, suggest.Mean(c.Suggest(kind)))}}
	}
	var errs []SpecError
	switch {
	case e.validator != nil:
		errs = e.validator.validate(spec, root)
	case e.kind.Base != "":
		// No schema of its own: check what the base kind will receive.
		base := c.kinds[strings.ToLower(e.kind.Base)]
		baseSpec, err := c.derivedSpec(e.kind, spec, nil)
		if err != nil {
			return []SpecError{{Path: root, Message: err.Error()}}
		}
		prefix := root
		if e.kind.Wrap == "" {
			errs = base.validator.validate(baseSpec, root)
		} else {
			errs = base.validator.validate(baseSpec, "base")
			prefix = "base"
		}
		for i := range errs {
			if e.kind.Wrap != "" && strings.HasPrefix(errs[i].Path, prefix+"."+e.kind.Wrap) {
				errs[i].Path = root + strings.TrimPrefix(errs[i].Path, prefix+"."+e.kind.Wrap)
			}
		}
	}
	errs = append(errs, readOnlyErrors(e.kind, spec, root)...)
	return sortErrors(errs)
}

// readOnlyErrors refuses attributes the system reports and no one sets.
func readOnlyErrors(k Kind, spec map[string]any, root string) []SpecError {
	var errs []SpecError
	for attr, ak := range k.Attributes {
		if ak != ReadOnly {
			continue
		}
		if _, set := spec[attr]; set {
			errs = append(errs, SpecError{
				Path:    nested.Key(root, attr),
				Message: fmt.Sprintf("%q is read-only: it is reported by the system and cannot be set", attr),
			})
		}
	}
	return errs
}

// validate runs the schema, the kind's rules and the expression checks.
func (v *validator) validate(spec map[string]any, root string) []SpecError {
	dynamic := map[string]bool{}
	inst := prepare(spec, dynamic)
	var errs []SpecError
	if err := v.schema.Validate(inst); err != nil {
		if verr, ok := err.(*jsonschema.ValidationError); ok {
			conv := converter{v: v, inst: inst, dynamic: dynamic, root: root}
			errs, _ = conv.convert(verr)
		} else {
			errs = append(errs, SpecError{Path: root, Message: err.Error()})
		}
	}
	if v.rules != nil {
		errs = append(errs, v.rules(inst, root)...)
	}
	for _, is := range expr.CheckSpec(inst) {
		errs = append(errs, SpecError{Path: nested.Key(root, is.Path), Message: is.Message})
	}
	return sortErrors(errs)
}

func sortErrors(errs []SpecError) []SpecError {
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Path != errs[j].Path {
			return errs[i].Path < errs[j].Path
		}
		return errs[i].Message < errs[j].Message
	})
	out := errs[:1]
	for _, e := range errs[1:] {
		if e != out[len(out)-1] {
			out = append(out, e)
		}
	}
	return out
}

// prepare returns a JSON-compatible copy of spec for the validator and
// records in dynamic the JSON pointers of its dynamic values (references,
// expressions). A pointer is only rendered for a dynamic value, which few
// values are; nothing is ordered, so no map's keys are sorted.
func prepare(spec map[string]any, dynamic map[string]bool) map[string]any {
	var fn func(p nested.Path, v any) (any, error)
	fn = func(p nested.Path, v any) (any, error) {
		if expr.IsDynamic(v) {
			dynamic[p.Pointer()] = true
			return v, nested.SkipChildren
		}
		switch x := v.(type) {
		case map[string]any, []any:
			return x, nil
		case []string:
			out := make([]any, len(x))
			for i, item := range x {
				out[i] = item
			}
			return out, nil
		case map[string]string:
			out := make(map[string]any, len(x))
			for k, item := range x {
				out[k] = item
			}
			return out, nil
		case map[any]any:
			out := make(map[string]any, len(x))
			for k, item := range x {
				out[fmt.Sprint(k)] = item
			}
			return out, nil
		case nil, string, bool, float64, int, int64, json.Number,
			int8, int16, int32, uint, uint8, uint16, uint32, uint64, float32:
			return x, nested.SkipChildren
		case time.Time:
			return x.Format(time.RFC3339Nano), nested.SkipChildren
		default:
			out, ok := nested.ViaJSON(v)
			if !ok {
				return out, nested.SkipChildren
			}
			return fn(p, out)
		}
	}
	out, _ := nested.MapAnyOrder(spec, "", fn)
	return out.(map[string]any)
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// converter turns the validator's error tree into SpecErrors with dotted
// paths and readable messages, dropping errors about dynamic values.
type converter struct {
	v       *validator
	inst    any
	dynamic map[string]bool
	root    string
}

// convert returns the errors under e and whether e could be satisfied by
// run-time values (every failure in it concerns a dynamic value).
func (c converter) convert(e *jsonschema.ValidationError) ([]SpecError, bool) {
	if c.isDynamic(e.InstanceLocation) {
		return nil, true
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(e.Causes) == 0 {
			return []SpecError{c.leaf(e, e.ErrorKind.LocalizedString(c.v.printer))}, false
		}
		var out []SpecError
		all := true
		for _, cause := range e.Causes {
			errs, ok := c.convert(cause)
			all = all && ok
			out = append(out, errs...)
		}
		if all {
			return nil, true
		}
		return out, false
	case *kind.AnyOf:
		return c.alternatives(e)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return []SpecError{c.leaf(e, "matches more than one of the allowed forms")}, false
		}
		return c.alternatives(e)
	case *kind.Type:
		return []SpecError{c.leaf(e, typeMessage(k.Want, k.Got))}, false
	case *kind.Enum:
		return []SpecError{c.leaf(e, enumMessage(k.Got, k.Want))}, false
	case *kind.Const:
		return []SpecError{c.leaf(e, "must be "+display(k.Want))}, false
	case *kind.Required:
		var out []SpecError
		for _, m := range k.Missing {
			out = append(out, SpecError{Path: c.path(append(e.InstanceLocation[:len(e.InstanceLocation):len(e.InstanceLocation)], m)), Message: fmt.Sprintf("missing required field %q", m)})
		}
		return out, false
	case *kind.AdditionalProperties:
		known := c.propertyNames(e.SchemaURL)
		var out []SpecError
		for _, p := range k.Properties {
			msg := fmt.Sprintf("unknown field %q%s", p, suggest.Hint(p, known))
			out = append(out, SpecError{Path: c.path(append(e.InstanceLocation[:len(e.InstanceLocation):len(e.InstanceLocation)], p)), Message: msg})
		}
		return out, false
	case *kind.FalseSchema:
		return []SpecError{c.leaf(e, "is not allowed")}, false
	case *kind.Minimum:
		return []SpecError{c.leaf(e, fmt.Sprintf("must be at least %s, got %s", ratString(k.Want), ratString(k.Got)))}, false
	case *kind.Maximum:
		return []SpecError{c.leaf(e, fmt.Sprintf("must be at most %s, got %s", ratString(k.Want), ratString(k.Got)))}, false
	case *kind.MinLength:
		return []SpecError{c.leaf(e, fmt.Sprintf("must be at least %d characters long", k.Want))}, false
	case *kind.MaxLength:
		return []SpecError{c.leaf(e, fmt.Sprintf("must be at most %d characters long", k.Want))}, false
	case *kind.MinItems:
		return []SpecError{c.leaf(e, fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got))}, false
	case *kind.MaxItems:
		return []SpecError{c.leaf(e, fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got))}, false
	case *kind.Pattern:
		return []SpecError{c.leaf(e, fmt.Sprintf("%s does not match the pattern %s", display(k.Got), k.Want))}, false
	default:
		return []SpecError{c.leaf(e, e.ErrorKind.LocalizedString(c.v.printer))}, false
	}
}

// alternatives handles anyOf/oneOf where no branch matched. A branch that
// fails only on dynamic values could match at run time. Branches that fail
// because the value has another type are noise when some branch has the
// right type; when all do, one "expected a or b" message says it.
func (c converter) alternatives(e *jsonschema.ValidationError) ([]SpecError, bool) {
	var typeWants []string
	var got string
	var rest []SpecError
	typeOnly := 0
	for _, cause := range e.Causes {
		if t, ok := typeMismatch(cause); ok {
			typeWants = append(typeWants, t.Want...)
			got = t.Got
			typeOnly++
			continue
		}
		errs, satisfiable := c.convert(cause)
		if satisfiable {
			return nil, true
		}
		rest = append(rest, errs...)
	}
	if typeOnly == len(e.Causes) && typeOnly > 0 {
		return []SpecError{c.leaf(e, typeMessage(uniqueStrings(typeWants), got))}, false
	}
	if len(rest) == 0 {
		return []SpecError{c.leaf(e, "does not match any allowed form")}, false
	}
	return rest, false
}

// typeMismatch reports whether a branch failed only on the value's type.
func typeMismatch(e *jsonschema.ValidationError) (*kind.Type, bool) {
	for {
		if t, ok := e.ErrorKind.(*kind.Type); ok {
			return t, true
		}
		if len(e.Causes) != 1 {
			return nil, false
		}
		switch e.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
			e = e.Causes[0]
		default:
			return nil, false
		}
	}
}

func (c converter) leaf(e *jsonschema.ValidationError, msg string) SpecError {
	return SpecError{Path: c.path(e.InstanceLocation), Message: msg}
}

func (c converter) isDynamic(loc []string) bool {
	if len(c.dynamic) == 0 {
		return false
	}
	ptr := ""
	if c.dynamic[ptr] {
		return true
	}
	for _, tok := range loc {
		ptr += "/" + escapePointer(tok)
		if c.dynamic[ptr] {
			return true
		}
	}
	return false
}

// path renders an instance location as a dotted path, with list indexes
// in brackets.
func (c converter) path(loc []string) string {
	var b strings.Builder
	b.WriteString(c.root)
	cur := c.inst
	for _, tok := range loc {
		switch x := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
				cur = x[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = x[tok]
		default:
			cur = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// propertyNames lists the properties declared by the schema at a location
// ("https://…/file.json#/properties/headers").
func (c converter) propertyNames(schemaURL string) []string {
	_, frag, _ := strings.Cut(schemaURL, "#")
	node := c.v.doc
	if frag != "" {
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch x := node.(type) {
			case map[string]any:
				node = x[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(x) {
					return nil
				}
				node = x[i]
			default:
				return nil
			}
		}
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for p := range props {
		names = append(names, p)
	}
	sort.Strings(names)
	return names
}

func typeMessage(want []string, got string) string {
	if got == "integer" {
		got = "number"
	}
	return fmt.Sprintf("expected %s, got %s", strings.Join(want, " or "), got)
}

func enumMessage(got any, want []any) string {
	opts := make([]string, len(want))
	strs := make([]string, 0, len(want))
	for i, w := range want {
		opts[i] = display(w)
		if s, ok := w.(string); ok {
			strs = append(strs, s)
		}
	}
	msg := fmt.Sprintf("must be one of %s, got %s", strings.Join(opts, ", "), display(got))
	if s, ok := got.(string); ok {
		msg += suggest.Hint(s, strs)
	}
	return msg
}

func display(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func uniqueStrings(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
