package expr

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
)

// Reference kinds a spec value may hold in place of a literal.
const (
	EnvRefKey    = "envRef"
	SecretRefKey = "secretRef"
)

// RefKind says what a spec value is: a literal, an env or secret reference,
// or a string with "{{ … }}" expressions.
type RefKind int

const (
	Literal RefKind = iota
	EnvRef
	SecretRef
	Template
)

// Classify tells what kind of value v is. A reference is a map with exactly
// one key, envRef or secretRef; a template is a string containing "{{".
func Classify(v any) RefKind {
	switch x := v.(type) {
	case string:
		if IsTemplate(x) {
			return Template
		}
	case map[string]any:
		if len(x) == 1 {
			if _, ok := x[EnvRefKey]; ok {
				return EnvRef
			}
			if _, ok := x[SecretRefKey]; ok {
				return SecretRef
			}
		}
	}
	return Literal
}

// IsDynamic reports whether v is only known at run time (a reference or a
// template string), so static validation must accept it wherever a scalar
// is expected.
func IsDynamic(v any) bool { return Classify(v) != Literal }

// HasDynamic reports whether v is or holds, at any depth, anything
// resolved at run time (env or secret refs, expressions over dependencies).
func HasDynamic(v any) bool {
	found := false
	_ = nested.Walk(v, "", func(_ nested.Path, v any) error {
		if IsDynamic(v) {
			found = true
			return nested.SkipAll
		}
		return nil
	})
	return found
}

// IsTemplate reports whether s holds an expression.
func IsTemplate(s string) bool { return strings.Contains(s, "{{") }

// parsedEnvRef is the decoded form of {envRef: {key, default}}.
type parsedEnvRef struct {
	Key        string
	Default    any
	HasDefault bool
}

// parseEnvRef decodes the body of an envRef.
func parseEnvRef(body any) (parsedEnvRef, error) {
	m, ok := body.(map[string]any)
	if !ok {
		return parsedEnvRef{}, fmt.Errorf("envRef must be an object {key, default}, got %s", nested.Describe(body))
	}
	var r parsedEnvRef
	for k, v := range m {
		switch k {
		case "key":
			s, ok := v.(string)
			if !ok || s == "" {
				return parsedEnvRef{}, fmt.Errorf("envRef.key must be a non-empty string")
			}
			r.Key = s
		case "default":
			r.Default, r.HasDefault = v, true
		default:
			return parsedEnvRef{}, fmt.Errorf("unknown field %q in envRef (want key, default)", k)
		}
	}
	if r.Key == "" {
		return parsedEnvRef{}, fmt.Errorf("envRef.key is required")
	}
	if err := CheckEnvKey(r.Key); err != nil {
		return parsedEnvRef{}, fmt.Errorf("envRef.key: %w", err)
	}
	return r, nil
}

// parseSecretRef decodes the body of a secretRef and returns its key.
func parseSecretRef(body any) (string, error) {
	m, ok := body.(map[string]any)
	if !ok {
		return "", fmt.Errorf("secretRef must be an object {key}, got %s", nested.Describe(body))
	}
	var key string
	for k, v := range m {
		switch k {
		case "key":
			s, ok := v.(string)
			if !ok || s == "" {
				return "", fmt.Errorf("secretRef.key must be a non-empty string")
			}
			key = s
		default:
			return "", fmt.Errorf("unknown field %q in secretRef (want key)", k)
		}
	}
	if key == "" {
		return "", fmt.Errorf("secretRef.key is required")
	}
	return key, nil
}

// DepField returns the expression that reads field of the outputs of the
// dependency dep ("Kind/name" or a bare name or task id), for example
// {{ (dep "Label/lucid_einstein").id }}.
func DepField(dep, field string) string {
	if isIdentifier(field) {
		return "{{ (dep " + strconv.Quote(dep) + ")." + field + " }}"
	}
	return "{{ index (dep " + strconv.Quote(dep) + ") " + strconv.Quote(field) + " }}"
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

type stringSet map[string]struct{}

func (s stringSet) add(v string) { s[v] = struct{}{} }

func (s stringSet) sorted() []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(s))
}
