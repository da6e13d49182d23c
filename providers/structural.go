package providers

import (
	"context"

	"github.com/cairn-io/cairn/model"
)

// structural implements Fuel's group, stage and skipped task types: they
// only order other steps, so converging one changes nothing.
type structural struct{ kind string }

// NewStructural returns the provider of a structural kind ("group",
// "stage" or "skipped").
func NewStructural(kind string) Provider { return structural{kind: kind} }

func (s structural) Kind() string { return s.kind }

// Canonicalize accepts any parameters: Fuel puts arbitrary ones on group
// and stage tasks, and a skipped task keeps the spec of what it replaced.
func (s structural) Canonicalize(spec model.Spec) (model.Spec, error) { return spec, nil }

func (s structural) Read(context.Context, Env, model.Spec) (State, error) {
	return State{Exists: true}, nil
}

func (s structural) Apply(_ context.Context, _ Env, _ model.Spec, have State) (State, error) {
	return have, nil
}

func (s structural) Delete(context.Context, Env, State) error { return nil }

// Plan is always noop.
func (s structural) Plan(model.Spec, State) model.Action { return model.ActionNoop }
