// Package expr is Cairn's one expression language: Go's text/template over
// env and secret references, dependency outputs, the node and variables.
// It serves string interpolation in spec values ("hello {{ env \"SITE\" }}"),
// reading a dependency's applied state ({{ .deps.disk.zone }} or
// {{ (dep "Disk/data").zone }}), and Fuel task conditions
// (eq .node.name "node-1").
//
// Templates may not touch files or the network, and every evaluation is
// bounded in output size, loop iterations and time.
package expr

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/cairn-io/cairn/internal/nested"
)

// Context is what expressions can see.
type Context struct {
	// Env looks up environment variables; nil means the process
	// environment.
	Env func(key string) (string, bool)
	// Secret looks up secrets; nil means no secrets are available.
	Secret func(key string) (string, bool)
	// Deps holds the outputs of dependencies, keyed by "Kind/name" and by
	// bare name or task id.
	Deps map[string]map[string]any
	// Node describes the node the step runs on: {name, id, roles}.
	Node map[string]any
	// Vars are extra variables (a file template's vars), reachable as
	// .vars.x and, unless shadowing deps/node/vars, as .x.
	Vars map[string]any
	// Funcs adds or overrides template functions (an execution adds the
	// runtime functions of conditions, see RuntimeFuncNames).
	Funcs template.FuncMap
	// Verbatim names top-level spec keys Resolve copies without rendering:
	// attributes that are templates the provider renders itself (a file's
	// template, see kinds.Kind.Verbatim).
	Verbatim []string
	// Limits bound each evaluation; zero fields take the defaults.
	Limits Limits
}

// Missing lists what a resolution needed but could not find, sorted and
// unique: env variables without default, and secrets.
type Missing struct {
	Env     []string `json:"env,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
}

// Empty reports whether nothing was missing.
func (m Missing) Empty() bool { return len(m.Env) == 0 && len(m.Secrets) == 0 }

func osLookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// Resolve returns a deep copy of spec with every reference resolved:
// {envRef: {key, default}} becomes the variable's value (the default when
// unset, typed like the default when the value parses so), {secretRef: {key}}
// the secret, and strings containing "{{" are rendered. A string that is a
// single action keeps the type of its value ("{{ .deps.disk.size }}" stays a
// number). Unset env variables without default and unknown secrets are
// listed in Missing and left as "". Errors name the path of each value that
// failed, and never contain secret values.
func Resolve(spec map[string]any, c Context) (map[string]any, Missing, error) {
	e := newEvaluator(c)
	verbatim := make(map[string]bool, len(c.Verbatim))
	for _, k := range c.Verbatim {
		verbatim[k] = true
	}
	var errs []error
	resolve := e.resolver(&errs)
	out := make(map[string]any, len(spec))
	// Keys sorted into a slice of the right size: slices.Sorted grows its
	// own from nothing, half a dozen allocations on every Resolve.
	keys := slices.AppendSeq(make([]string, 0, len(spec)), maps.Keys(spec))
	slices.Sort(keys)
	for _, k := range keys {
		if verbatim[k] {
			out[k] = normalize(spec[k])
			continue
		}
		out[k] = resolveAt(spec[k], k, resolve, &errs)
	}
	return out, e.missing(), e.joinRedacted(errs)
}

// ResolveValue resolves one value the way Resolve resolves a spec's values.
func ResolveValue(v any, c Context) (any, Missing, error) {
	e := newEvaluator(c)
	var errs []error
	out := resolveAt(v, "", e.resolver(&errs), &errs)
	return out, e.missing(), e.joinRedacted(errs)
}

// Render renders a template string as text (a file's own template).
func Render(src string, c Context) (string, Missing, error) {
	e := newEvaluator(c)
	v, err := e.render(src, false)
	if err != nil {
		return "", e.missing(), e.redact(err)
	}
	return v.(string), e.missing(), nil
}

// Condition evaluates a Fuel task condition. An empty condition is true.
// The source is a bare pipeline (eq .node.name "node-1") or a template
// ({{ eq .node.name "node-1" }}); it must yield "true" or "false".
func Condition(src string, c Context) (bool, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return true, nil
	}
	e := newEvaluator(c)
	v, err := e.render(conditionSource(src), false)
	if err != nil {
		return false, e.redact(fmt.Errorf("condition: %w", err))
	}
	switch out := strings.TrimSpace(v.(string)); out {
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, e.redact(fmt.Errorf("condition must yield true or false, got %q", out))
	}
}

func conditionSource(src string) string {
	if IsTemplate(src) {
		return src
	}
	return "{{ " + src + " }}"
}

// Check parses a template string without evaluating it, for offline
// validation: bad syntax and unknown functions are errors. A string without
// "{{" is plain text and always valid.
func Check(src string) error {
	if !IsTemplate(src) {
		return nil
	}
	_, err := parseTree(src, staticNames())
	return err
}

// CheckCondition is Check for a condition (bare pipeline or template).
func CheckCondition(src string) error {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil
	}
	_, err := parseTree(conditionSource(src), staticNames())
	if err != nil {
		return fmt.Errorf("condition: %w", err)
	}
	return nil
}

// resolveAt copies v, at path, through resolve (a resolver).
func resolveAt(v any, path string, resolve func(nested.Path, any) (any, error), errs *[]error) any {
	out, err := nested.Map(v, path, resolve)
	if err != nil {
		*errs = append(*errs, pathError(path, err))
	}
	return out
}

// resolver is the nested.Map function that resolves references and
// renders strings, adding an error for each value that failed, named by
// its path. One serves a whole Resolve.
func (e *evaluator) resolver(errs *[]error) func(nested.Path, any) (any, error) {
	return func(p nested.Path, v any) (any, error) {
		var (
			out any
			err error
		)
		switch x := v.(type) {
		case string:
			if !IsTemplate(x) {
				return x, nested.SkipChildren
			}
			if out, err = e.render(x, true); err != nil {
				out = ""
			}
		case map[string]any:
			switch Classify(x) {
			case EnvRef:
				out, err = e.resolveEnv(x[EnvRefKey])
			case SecretRef:
				out, err = e.resolveSecret(x[SecretRefKey])
			default:
				return x, nil
			}
		case []any:
			return x, nil
		default:
			// A Go value of another type is first put in the JSON form;
			// a map or list is then walked into.
			return normalize(v), nil
		}
		if err != nil {
			*errs = append(*errs, pathError(p.String(), err))
		}
		return out, nested.SkipChildren
	}
}

func (e *evaluator) resolveEnv(body any) (any, error) {
	ref, err := parseEnvRef(body)
	if err != nil {
		return "", err
	}
	lookup := e.ctx.Env
	if lookup == nil {
		lookup = osLookupEnv
	}
	if v, ok := lookup(ref.Key); ok {
		if ref.HasDefault {
			return typedLike(v, ref.Default), nil
		}
		return v, nil
	}
	if ref.HasDefault {
		return normalize(ref.Default), nil
	}
	e.missingEnv.add(ref.Key)
	return "", nil
}

// typedLike converts an env string to the type of the default when it
// parses as that type, so {envRef: {key: T, default: 60}} stays a number.
func typedLike(v string, def any) any {
	switch normalize(def).(type) {
	case int64:
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f
		}
	case float64:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f
		}
	case bool:
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b
		}
	}
	return v
}

func (e *evaluator) resolveSecret(body any) (any, error) {
	key, err := parseSecretRef(body)
	if err != nil {
		return "", err
	}
	return e.secret(key), nil
}

func (e *evaluator) missing() Missing {
	return Missing{Env: e.missingEnv.sorted(), Secrets: e.missingSecrets.sorted()}
}

func pathError(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// redact returns err with every secret value seen during the evaluation
// replaced. Only ErrLimit survives unwrapping, so nothing can reach the
// original message through errors.Unwrap.
func (e *evaluator) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := Redact(err.Error(), e.secretValues.sorted())
	return &Error{msg: msg, limit: errors.Is(err, ErrLimit)}
}

func (e *evaluator) joinRedacted(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return e.redact(errors.Join(errs...))
}

// Error is an evaluation error with secret values already redacted.
type Error struct {
	msg   string
	limit bool
}

func (e *Error) Error() string { return e.msg }

// Unwrap exposes ErrLimit when a limit was hit, and nothing else.
func (e *Error) Unwrap() error {
	if e.limit {
		return ErrLimit
	}
	return nil
}
