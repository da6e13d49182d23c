package prepare

import (
	"maps"
	"slices"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
)

// ParamRefs are the env refs and secrets a node's steps read by name: the
// parameters the agent API gives that node. A name computed at run time
// (env .vars.key) is not seen; such a step reads the agent's own
// environment and secrets, as every step on an agent did before. Its zero
// value is not usable: see NewParamRefs.
type ParamRefs struct{ env, secrets map[string]bool }

// NewParamRefs returns an empty set of refs.
func NewParamRefs() *ParamRefs {
	return &ParamRefs{env: map[string]bool{}, secrets: map[string]bool{}}
}

// Add notes what s's spec and condition read.
func (r *ParamRefs) Add(s *model.Step) {
	env, secrets, _ := expr.Scan(s.Spec)
	condEnv, condSecrets, _ := expr.ScanCondition(s.Condition)
	for _, k := range slices.Concat(env, condEnv) {
		r.env[k] = true
	}
	for _, k := range slices.Concat(secrets, condSecrets) {
		r.secrets[k] = true
	}
}

// Sorted returns the env refs and secrets noted, each sorted.
func (r *ParamRefs) Sorted() (env, secrets []string) {
	return slices.Sorted(maps.Keys(r.env)), slices.Sorted(maps.Keys(r.secrets))
}
