// The functions that read and write text: matches, concat, toJson, toYaml.

package yaql

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

func fnMatches(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, ev.typeErr(c, "a string", a[0])
	}
	pattern, ok := a[1].(string)
	if !ok {
		return nil, ev.typeErr(c, "a pattern (a string)", a[1])
	}
	re, err := ev.regexp(pattern)
	if err != nil {
		return nil, ev.errorf(c, "matches: invalid pattern %q: %v", pattern, err)
	}
	return re.MatchString(s), nil
}

// fnConcat joins strings (concat("a", $.b)) or, called on a list, lists.
func fnConcat(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	if c.Recv != nil {
		out := []any{}
		for _, x := range a {
			l, ok := x.([]any)
			if !ok {
				return nil, ev.typeErr(c, "lists", x)
			}
			out = append(out, l...)
		}
		return ev.sized(c, out)
	}
	var b strings.Builder
	for _, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, ev.typeErr(c, "strings", x)
		}
		b.WriteString(s)
		if b.Len() > ev.size {
			return ev.sized(c, b.String())
		}
	}
	return b.String(), nil
}

func fnToJson(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	var b strings.Builder
	if err := pyJSON(&b, a[0], ev.size); err != nil {
		return nil, ev.errorf(c, "toJson: %v", err)
	}
	return b.String(), nil
}

func fnToYaml(ev *evaluator, c *Call, _ any, a []any) (any, error) {
	s, err := toYAML(a[0])
	if err != nil {
		return nil, ev.errorf(c, "toYaml: %v", err)
	}
	return ev.sized(c, s)
}

// pyJSON writes v as Python's json.dumps(v, sort_keys=True) does: ", " and
// ": " separators, non-ASCII escaped.
func pyJSON(b *strings.Builder, v any, limit int) error {
	if b.Len() > limit {
		return fmt.Errorf("%w: the text exceeds %d bytes", ErrLimit, limit)
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		fmt.Fprintf(b, "%d", x)
	case float64:
		b.WriteString(pyFloat(x))
	case string:
		pyString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := pyJSON(b, e, limit); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteString(", ")
			}
			pyString(b, k)
			b.WriteString(": ")
			if err := pyJSON(b, x[k], limit); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot encode a %s", typeName(v))
	}
	return nil
}

// pyFloat formats a float as Python's repr does.
func pyFloat(f float64) string {
	raw, err := json.Marshal(f)
	if err != nil {
		return "NaN"
	}
	s := string(raw)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func pyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e && r <= 0xffff:
			fmt.Fprintf(b, `\u%04x`, r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
