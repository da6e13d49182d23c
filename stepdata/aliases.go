package stepdata

import (
	"strings"

	"github.com/cairn-io/cairn/model"
)

// AliasRecords are a step's aliased dependencies as its expressions
// (.deps.ALIAS) and an external program (its request's dependencies) see
// them: {name, type, state}, the state being the dependency's outputs.
// byID holds the outputs of the step's dependencies by step id; an alias
// whose target left none (it was skipped) is left out, so an expression
// over it fails by name.
func AliasRecords(aliases map[string]string, byID map[string]map[string]any) map[string]any {
	if len(aliases) == 0 {
		return nil
	}
	out := make(map[string]any, len(aliases))
	for alias, target := range aliases {
		for id, state := range byID {
			if !aliasTargets(id, target) {
				continue
			}
			kind, _, _ := strings.Cut(id, "/")
			out[alias] = map[string]any{"name": StepName(id), "type": kind, "state": state}
			break
		}
	}
	return out
}

// aliasTargets reports whether step id ("kind/name" or "kind/name@node")
// is the resource target names: "Kind/name" (kind compared
// case-insensitively) or a bare name.
func aliasTargets(id, target string) bool {
	base, _, _ := strings.Cut(id, "@")
	kind, name, _ := strings.Cut(base, "/")
	if tk, tn, ok := strings.Cut(target, "/"); ok {
		return tn == name && strings.EqualFold(tk, kind)
	}
	return target == name
}

// StepName is the name part of step id "kind/name@node".
func StepName(id string) string {
	if _, after, ok := strings.Cut(id, "/"); ok {
		id = after
	}
	name, _, _ := strings.Cut(id, "@")
	return name
}

// NodeName is the node a step's Node field names: model.ControlPlane for
// "".
func NodeName(n string) string {
	if n == "" {
		return model.ControlPlane
	}
	return n
}
