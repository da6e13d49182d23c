package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// An agent keeps the parameters of at most paramsCacheEntries executions,
// each for paramsCacheTTL: the units of one execution on its node read
// them once, and secrets do not stay in its memory longer than that.
const (
	paramsCacheEntries = 16
	paramsCacheTTL     = 10 * time.Minute
)

// claimParams copies the parameters the API stored under ref to the
// execution's step data, where its step activities read them. The store
// seals both records; the workflow has carried only ref.
func (a *Activities) claimParams(ctx context.Context, execID, ref string) error {
	if ref == "" {
		return nil
	}
	data, err := a.d.Store.GetStepData(ctx, contract.ParamsExecution(ref), contract.ParamsKey, contract.DataParams)
	if notFound(err) {
		return configError("the parameters of this execution are no longer kept: apply again with them")
	}
	if err != nil {
		return fmt.Errorf("read parameters: %w", err)
	}
	if err := a.d.Store.PutStepData(ctx, execID, contract.ParamsKey, contract.DataParams, data); err != nil {
		return fmt.Errorf("keep parameters: %w", err)
	}
	return nil
}

// paramsLoader loads an execution's parameters once for a unit's steps,
// which resolve concurrently.
type paramsLoader struct {
	once   sync.Once
	params model.ApplyParams
	err    error
}

// load returns the execution's parameters; none when it was given none.
func (l *paramsLoader) load(ctx context.Context, a *Activities, execID string) (model.ApplyParams, error) {
	l.once.Do(func() { l.params, l.err = a.readParams(ctx, execID) })
	return l.params, l.err
}

// readParams reads the execution's parameters: from the store on the
// control plane; on an agent through the agent API, which gives the node
// the env refs and secrets its steps read by name and every variable,
// kept per execution (a cache bounded in entries and time) since each of
// the node's units asks.
func (a *Activities) readParams(ctx context.Context, execID string) (model.ApplyParams, error) {
	src := StepData(a.d.Store)
	agent := a.d.Store == nil
	if agent {
		if a.d.Steps == nil {
			return model.ApplyParams{}, nil
		}
		if p, ok := a.params.Get(execID); ok {
			return p, nil
		}
		src = a.d.Steps
	}
	var p model.ApplyParams
	data, err := src.GetStepData(ctx, execID, contract.ParamsKey, contract.DataParams)
	switch {
	case notFound(err):
	case err != nil:
		return p, fmt.Errorf("read parameters: %w", err)
	default:
		if err := json.Unmarshal(data, &p); err != nil {
			// The record may hold secrets: say nothing of its bytes.
			return model.ApplyParams{}, fmt.Errorf("parameters of %s do not decode", execID)
		}
	}
	if agent {
		a.params.Put(execID, p)
	}
	return p, nil
}

// lookups are the env and secret lookups of an execution: its parameters
// first, then the worker's own.
func (a *Activities) lookups(p model.ApplyParams) (env, secret func(string) (string, bool)) {
	base := a.d.Env
	env = func(k string) (string, bool) {
		if v, ok := p.EnvRefs[k]; ok {
			return v, true
		}
		if base == nil {
			return os.LookupEnv(k)
		}
		return base(k)
	}
	own := a.secretLookup()
	secret = func(k string) (string, bool) {
		if v, ok := p.Secrets[k]; ok {
			return v, true
		}
		return own(k)
	}
	return env, secret
}

// unitParams are the execution's parameters, read once per unit (u nil: a
// step of its own).
func (a *Activities) unitParams(ctx context.Context, execID string, u *unitRun) (model.ApplyParams, error) {
	loader := &paramsLoader{}
	if u != nil {
		loader = &u.params
	}
	return loader.load(ctx, a, execID)
}
