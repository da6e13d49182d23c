package graphs

import (
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/yaql"
)

// exprIssue is what checking one expression found: the path of the value
// at fault relative to the field checked ("" for the field itself, or
// "yaql_exp") and the message; no message when the expression is fine.
type exprIssue struct {
	rel, msg string
}

// checkConditionForm checks a task condition by its form: a tagged yaql
// expression, Fuel's legacy syntax, or Cairn's own template condition.
func checkConditionForm(cond string) exprIssue {
	if src, ok := yaql.Untag(cond); ok {
		if _, err := yaql.Parse(src); err != nil {
			return exprIssue{"yaql_exp", "invalid yaql expression: " + err.Error()}
		}
		return exprIssue{}
	}
	if yaql.IsLegacy(cond) {
		if _, err := yaql.ParseLegacy(cond); err != nil {
			return exprIssue{"", "invalid legacy condition: " + err.Error()}
		}
		return exprIssue{}
	}
	if err := expr.CheckCondition(cond); err != nil {
		return exprIssue{"", "invalid expression: " + err.Error()}
	}
	return exprIssue{}
}

// checkTaskYAQL checks a task's yaql values besides its condition: a
// strategy amount, cross dependencies and {yaql_exp: "…"} values anywhere
// in its parameters.
// It returns the paths of the parameter values that are expressions
// ("parameters.data"), which the schema cannot judge before they are
// evaluated.
func checkTaskYAQL(e *taskEntry, c *collector) []string {
	t := e.t
	if t.Strategy != nil && t.Strategy.AmountYAQL != "" && !amountInParameters(t) {
		if _, err := yaql.Parse(t.Strategy.AmountYAQL); err != nil {
			rel := "strategy.amount.yaql_exp"
			c.add(e.pos(rel, false), e.path+"."+rel, "invalid yaql expression: %v", err)
		}
	}
	for _, cd := range []struct{ field, alt, src string }{
		{"cross_depends", "cross-depends", t.CrossDependsYAQL},
		{"cross_depended_by", "cross-depended-by", t.CrossDependedByYAQL},
	} {
		if cd.src == "" {
			continue
		}
		if _, err := yaql.Parse(cd.src); err != nil {
			field := cd.field
			if e.node != nil && mapGet(e.node, cd.alt) != nil {
				field = cd.alt // the spelling the document used
			}
			rel := field + ".yaql_exp"
			c.add(e.pos(rel, false), e.path+"."+rel, "invalid yaql expression: %v", err)
		}
	}
	var paths []string
	yaql.WalkValues(t.Parameters, "parameters", func(path, src string) {
		paths = append(paths, path)
		if _, err := yaql.Parse(src); err != nil {
			rel := nested.Key(path, "yaql_exp")
			c.add(e.pos(rel, false), e.path+"."+rel, "invalid yaql expression: %v", err)
		}
	})
	return paths
}

// underAny reports whether path is one of roots or inside one.
func underAny(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+".") || strings.HasPrefix(path, r+"[") {
			return true
		}
	}
	return false
}

// HasYAQL reports whether a task carries yaql expressions beyond its
// condition (a strategy amount, cross dependencies, parameter values).
func HasYAQL(t *model.Task) bool {
	if t.Strategy != nil && t.Strategy.AmountYAQL != "" {
		return true
	}
	if t.CrossDependsYAQL != "" || t.CrossDependedByYAQL != "" {
		return true
	}
	return yaql.HasValue(t.Parameters)
}

// amountInParameters reports whether a task's yaql strategy amount is the
// one its parameters give (parameters.strategy, as Fuel's older tasks
// write it): the parameters' check reports it, at its place.
func amountInParameters(t *model.Task) bool {
	ps, _ := t.Parameters["strategy"].(map[string]any)
	src, ok := yaql.Value(ps["amount"])
	return ok && src == t.Strategy.AmountYAQL
}
