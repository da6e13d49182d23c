package providers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

// Canonical forms, shared by the kinds: Puppet's canonicalize, so that the
// same value written two ways compares equal and a converged resource
// reports no change.

// NormalizeValue returns a deep copy of v in the one form a JSON decoder
// would give back, except for numbers: maps become map[string]any, slices
// []any, []byte a base64 string, and every number int64 when it is integral
// (float64 from JSON, int from YAML and int64 compare equal) or float64
// otherwise. Go values of other types go through encoding/json.
func NormalizeValue(v any) any {
	out, _ := nested.MapAnyOrder(v, "", normalizeOne)
	return out
}

// normalizeOne is NormalizeValue's nested.Map function: it converts one
// value, and a map or list of another Go type into map[string]any or []any
// for Map to walk into.
func normalizeOne(p nested.Path, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nested.SkipChildren
	case int:
		return int64(x), nested.SkipChildren
	case int8:
		return int64(x), nested.SkipChildren
	case int16:
		return int64(x), nested.SkipChildren
	case int32:
		return int64(x), nested.SkipChildren
	case int64:
		return x, nested.SkipChildren
	case uint:
		return normalizeUint(uint64(x)), nested.SkipChildren
	case uint8:
		return int64(x), nested.SkipChildren
	case uint16:
		return int64(x), nested.SkipChildren
	case uint32:
		return int64(x), nested.SkipChildren
	case uint64:
		return normalizeUint(x), nested.SkipChildren
	case float32:
		return normalizeFloat(float64(x)), nested.SkipChildren
	case float64:
		return normalizeFloat(x), nested.SkipChildren
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nested.SkipChildren
		}
		if f, err := x.Float64(); err == nil {
			return normalizeFloat(f), nested.SkipChildren
		}
		return x.String(), nested.SkipChildren
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nested.SkipChildren
	case map[string]any, []any:
		return x, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out, nested.SkipChildren
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, nested.SkipChildren
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = e
		}
		return out, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v), nested.SkipChildren
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return fmt.Sprint(v), nested.SkipChildren
	}
	return normalizeOne(p, decoded)
}

func normalizeUint(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return float64(u)
}

// maxExactInt is the largest integer a float64 holds exactly.
const maxExactInt = 1 << 53

func normalizeFloat(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) <= maxExactInt {
		return int64(f)
	}
	return f
}

// NormalizeSpec returns a normalized deep copy of a spec.
func NormalizeSpec(spec model.Spec) model.Spec {
	if spec == nil {
		return model.Spec{}
	}
	return NormalizeValue(map[string]any(spec)).(map[string]any)
}

// EqualValues reports whether a and b are the same JSON value: key order
// does not matter and numbers compare by value whatever their Go type.
func EqualValues(a, b any) bool {
	if as, ok := a.(string); ok {
		bs, ok := b.(string)
		return ok && as == bs
	}
	return reflect.DeepEqual(NormalizeValue(a), NormalizeValue(b))
}

// CanonicalPath cleans a path and drops a trailing slash; relative paths
// stay relative (they resolve against a node's root later).
func CanonicalPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// canonicalSpecPath is CanonicalPath for a path attribute of a spec, which
// may not climb with ".." above where it starts: cleaning "/../etc" to
// "/etc" would hide an escape attempt from a node's confinement.
func canonicalSpecPath(attr, p string) (string, error) {
	rel := filepath.Clean(strings.TrimLeft(p, "/"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", configErrorf(attr, "path %q escapes the root with \"..\"", p)
	}
	return CanonicalPath(p), nil
}

// CanonicalURL lower-cases the scheme and host and drops trailing slashes
// from the path, so "http://X/api/" and "http://x/api" compare equal.
func CanonicalURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("url %q: %w", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/")
	}
	return u.String(), nil
}

// CanonicalMode returns a permission mode as four octal digits ("0644").
// Strings are octal ("644", "0644", "0o644"). A number is read the way it
// was most likely meant: 644 as octal digits, and 420 — what YAML makes of
// 0644 — as the mode's value. When a number's decimal digits are all octal
// both readings are possible; the one that looks like a real mode wins (no
// set-id or sticky bits, owner ⊇ group ⊇ other, no write- or execute-only
// triads), ties going to the octal digits. Write a string to be exact.
func CanonicalMode(v any) (string, error) {
	switch x := NormalizeValue(v).(type) {
	case string:
		s := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(x), "0o"), "0O")
		if s == "" {
			return "", fmt.Errorf("mode %q: empty", x)
		}
		m, err := strconv.ParseUint(s, 8, 32)
		if err != nil || m > 0o7777 {
			return "", fmt.Errorf("mode %q: want octal digits such as \"0644\"", x)
		}
		return formatMode(uint32(m)), nil
	case int64:
		if x < 0 || x > 7777 { // 7777 is the largest octal-digit reading
			return "", fmt.Errorf("mode %d: out of range", x)
		}
		value := uint32(x)
		valueOK := x <= 0o7777
		digits, digitsOK := octalDigits(x)
		switch {
		case digitsOK && valueOK:
			if modeOddity(value) < modeOddity(digits) {
				return formatMode(value), nil
			}
			return formatMode(digits), nil
		case digitsOK:
			return formatMode(digits), nil
		case valueOK:
			return formatMode(value), nil
		}
		return "", fmt.Errorf("mode %d: out of range", x)
	case nil:
		return "", fmt.Errorf("mode: empty")
	default:
		return "", fmt.Errorf("mode %v: want a string such as \"0644\" or a number", x)
	}
}

// octalDigits reads n's decimal digits as octal (644 → 0o644).
func octalDigits(n int64) (uint32, bool) {
	m, err := strconv.ParseUint(strconv.FormatInt(n, 10), 8, 32)
	if err != nil || m > 0o7777 {
		return 0, false
	}
	return uint32(m), true
}

// modeOddity counts the ways a mode looks unlike one people set.
func modeOddity(m uint32) int {
	odd := 0
	if m&0o7000 != 0 {
		odd++
	}
	owner, group, other := m>>6&7, m>>3&7, m&7
	if group&^owner != 0 || other&^group != 0 {
		odd++
	}
	for _, t := range []uint32{owner, group, other} {
		if t != 0 && t&4 == 0 { // write- or execute-only
			odd++
		}
	}
	return odd
}

func formatMode(m uint32) string { return fmt.Sprintf("%04o", m) }

// parseMode reads a canonical mode back.
func parseMode(s string) (uint32, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, fmt.Errorf("mode %q: want octal digits", s)
	}
	return uint32(m), nil
}

// CanonicalDuration reads a timeout: a number of seconds or a Go duration
// string ("90s", "1m30s"; a bare "90" is seconds too).
func CanonicalDuration(v any) (time.Duration, error) {
	switch x := NormalizeValue(v).(type) {
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("duration %d: negative", x)
		}
		return time.Duration(x) * time.Second, nil
	case float64:
		if x < 0 || x > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("duration %v: out of range", x)
		}
		return time.Duration(x * float64(time.Second)), nil
	case string:
		s := strings.TrimSpace(x)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return CanonicalDuration(f)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("duration %q: want seconds or a duration such as \"90s\"", x)
		}
		if d < 0 {
			return 0, fmt.Errorf("duration %q: negative", x)
		}
		return d, nil
	default:
		return 0, fmt.Errorf("duration %v: want seconds or a duration such as \"90s\"", x)
	}
}

// specString reads an optional string attribute.
func specString(spec model.Spec, attr string) (string, bool, error) {
	v, ok := spec[attr]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, configErrorf(attr, "want a string, got %s", nested.Describe(v))
	}
	return s, true, nil
}

// specCommand reads a command written as a shell string or an argv list;
// a string becomes /bin/sh -c.
func specCommand(spec model.Spec, attr string) ([]string, bool, error) {
	v, ok := spec[attr]
	if !ok || v == nil {
		return nil, false, nil
	}
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, false, configErrorf(attr, "empty command")
		}
		return []string{"/bin/sh", "-c", x}, true, nil
	case []any:
		if len(x) == 0 {
			return nil, false, configErrorf(attr, "empty argv")
		}
		argv := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false, configErrorf(fmt.Sprintf("%s[%d]", attr, i), "want a string, got %s", nested.Describe(e))
			}
			argv[i] = s
		}
		if argv[0] == "" {
			return nil, false, configErrorf(attr+"[0]", "empty program name")
		}
		return argv, true, nil
	default:
		return nil, false, configErrorf(attr, "want a command string or an argv list, got %s", nested.Describe(v))
	}
}

// checkAttrs refuses attributes a kind does not know.
func checkAttrs[V any](kind string, spec model.Spec, known map[string]V) error {
	for k := range spec {
		if _, ok := known[k]; !ok {
			return configErrorf(k, "unknown attribute of kind %s%s", kind, suggest.Hint(k, slices.Collect(maps.Keys(known))))
		}
	}
	return nil
}
