package providers

import (
	"context"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// Prechecker is a kind that can check a resource before anything of its
// execution is applied (an external program's config against its
// config_schema). Precheck reads nothing of the object and changes
// nothing. want's property attributes may still hold expressions and refs
// (expr.IsDynamic) resolved only when the step runs: Precheck judges what
// is known and leaves errors at those values to the run.
type Prechecker interface {
	Precheck(ctx context.Context, env Env, want model.Spec) error
}

// Precheck canonicalizes req's spec and runs its kind's Precheck; a kind
// without one has nothing to check, nor has a spec whose parameters (the
// program, env, timeout: what says how to check) hold expressions or
// refs. Errors are the kind's own (ConfigError for a spec at fault).
func (r *Registry) Precheck(ctx context.Context, req Request) error {
	p, ok := r.Get(req.Kind)
	if !ok {
		return configErrorf("", "unknown kind %q", req.Kind)
	}
	pc, ok := p.(Prechecker)
	if !ok {
		return nil
	}
	for k, v := range req.Spec {
		if r.attrKind(p, req.Kind, k) != kinds.Property && expr.HasDynamic(v) {
			return nil
		}
	}
	want, err := r.canonical(p, req)
	if err != nil {
		return err
	}
	env := Env{Node: req.Node, Name: req.Name, Noop: true, Secrets: req.Secrets, Verbose: req.Verbose, fingerprintKey: r.fingerprintKey}
	return pc.Precheck(ctx, env, want)
}

// PrecheckKinds lists the registered kinds that have a Precheck, lower
// case.
func (r *Registry) PrecheckKinds() []string {
	var out []string
	for _, k := range r.Kinds() {
		if p, ok := r.Get(k); ok {
			if _, ok := p.(Prechecker); ok {
				out = append(out, strings.ToLower(k))
			}
		}
	}
	return out
}
