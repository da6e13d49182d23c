package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/stepdata"
)

// knownAfterApply stands in, during a dry-run, for a value a dependency
// only has once it is created.
const knownAfterApply = "(known after apply)"

// resolve turns the stored spec into the provider's input: env and secret
// refs and expressions over the dependencies' outputs. Secrets are read
// here, inside the activity, and never leave it.
func (a *Activities) resolve(ctx context.Context, execID string, u *unitRun, r *stepRun, noop bool) (model.Spec, expr.Context, error) {
	s := r.step
	if !s.NeedsResolve() {
		if s.Base == kinds.KindExternal {
			params, err := a.unitParams(ctx, execID, u)
			if err != nil {
				return nil, expr.Context{}, err
			}
			r.verbose = params.Verbose
		}
		return s.Spec, expr.Context{}, nil // nothing to resolve: most files of a batch
	}
	deps := map[string]map[string]any{}
	byID := map[string]map[string]any{}
	for _, d := range planner.Deps(&s.Step) {
		rec, ok := u.outputsOf(d)
		var err error
		if !ok {
			err = a.loadJSON(ctx, execID, d, contract.DataOutputs, &rec)
		}
		if err != nil && !notFound(err) {
			return nil, expr.Context{}, err
		}
		out := rec.DepOutputs()
		if noop && out["id"] == nil {
			out["id"] = knownAfterApply
		}
		if err != nil && !noop {
			continue // the dependency was skipped; expressions over it fail by name
		}
		deps[d] = out
		byID[d] = out
		if base, _, ok := strings.Cut(d, "@"); ok {
			deps[base] = out
		}
		deps[stepdata.StepName(d)] = out
	}
	aliases := stepdata.AliasRecords(s.DepAliases(), byID)
	for alias, rec := range aliases {
		deps[alias] = rec.(map[string]any)
	}
	params, err := a.unitParams(ctx, execID, u)
	if err != nil {
		return nil, expr.Context{}, err
	}
	r.verbose = params.Verbose
	ectx := exprContext(a, s, params)
	ectx.Deps = deps
	// The redaction of this step's messages covers the execution's
	// secrets as well as the worker's.
	r.secrets = expr.SecretValues(s.Spec, ectx.Secret)
	if s.Delete {
		return a.resolveForDelete(s.Spec, ectx), ectx, nil
	}
	spec, missing, err := expr.Resolve(s.Spec, ectx)
	r.missing = missing
	r.res.MissingEnv, r.res.MissingSecrets = missing.Env, missing.Secrets
	if err != nil {
		if noop && len(deps) > 0 {
			// Values of dependencies created by the apply are unknown yet.
			return nil, ectx, fmt.Errorf("%s (values of dependencies are known after apply)", err)
		}
		return nil, ectx, &providers.ConfigError{Err: err}
	}
	if !noop && !missing.Empty() {
		var what []string
		for _, k := range missing.Env {
			what = append(what, "env "+k)
		}
		for _, k := range missing.Secrets {
			what = append(what, "secret "+k)
		}
		return nil, ectx, &providers.ConfigError{Err: fmt.Errorf("missing %s", strings.Join(what, ", "))}
	}
	if len(aliases) > 0 {
		spec[kinds.DepAliasAttr] = aliases
	}
	return spec, ectx, nil
}

// resolveForDelete keeps what a delete needs of a spec that left the
// package: the values that still resolve (links to objects that are being
// deleted as well would not).
func (a *Activities) resolveForDelete(spec model.Spec, ectx expr.Context) model.Spec {
	out := model.Spec{}
	for k, v := range spec {
		if k == "links" {
			continue
		}
		if slices.Contains(ectx.Verbatim, k) {
			out[k] = v // a template of its own: the provider renders it
			continue
		}
		val, missing, err := expr.ResolveValue(v, ectx)
		if err != nil || !missing.Empty() {
			continue
		}
		out[k] = val
	}
	return out
}

func (a *Activities) secretLookup() func(string) (string, bool) {
	if a.d.Secrets == nil {
		return func(string) (string, bool) { return "", false }
	}
	return a.d.Secrets.Lookup
}

// exprContext is the expression context of s without dependencies, with
// the execution's parameters.
func exprContext(a *Activities, s *planner.StoredStep, params model.ApplyParams) expr.Context {
	env, secret := a.lookups(params)
	return expr.Context{
		Env: env, Secret: secret, Verbatim: s.Verbatim, Vars: params.Vars,
		Node: map[string]any{"name": stepdata.NodeName(s.Node), "id": stepdata.NodeName(s.Node)},
	}
}
