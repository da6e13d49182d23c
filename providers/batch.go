package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// Batcher is implemented by kinds whose changes are cheaper made together
// than one by one: a unit's packages are installed in one apt-get or dnf
// transaction. The batch runs before the resources' own applies, which
// then read what it left and change only what it did not.
type Batcher interface {
	// ApplyBatch makes the changes the canonical specs want, at once. A
	// failure is no resource's failure: each resource's own apply runs
	// next and reports its own.
	ApplyBatch(ctx context.Context, env Env, wants []model.Spec) error
}

// Batches reports whether kind's changes are made in batches (its
// provider is a Batcher), so callers gather only those requests.
func (r *Registry) Batches(kind string) bool {
	p, ok := r.Get(kind)
	if !ok {
		return false
	}
	_, ok = p.(Batcher)
	return ok
}

// ApplyBatches gives the requests of each Batcher kind and node to one
// ApplyBatch call (when there are two or more: one change needs no
// batch). reqs are changes planned to create or update; a request whose
// spec does not canonicalize is left to its own apply. It returns the
// batches' failures, joined, for the caller to log.
func (r *Registry) ApplyBatches(ctx context.Context, reqs []Request) error {
	type group struct {
		b     Batcher
		env   Env
		wants []model.Spec
	}
	groups := map[string]*group{}
	var order []string
	for _, req := range reqs {
		if req.Noop || req.Delete {
			continue
		}
		p, ok := r.Get(req.Kind)
		if !ok {
			continue
		}
		b, ok := p.(Batcher)
		if !ok {
			continue
		}
		want, err := r.canonical(p, req)
		if err != nil {
			continue
		}
		key := strings.ToLower(p.Kind()) + "\x00" + req.Node.Name
		g := groups[key]
		if g == nil {
			g = &group{b: b, env: Env{Node: req.Node, fingerprintKey: r.fingerprintKey}}
			groups[key] = g
			order = append(order, key)
		}
		g.wants = append(g.wants, want)
	}
	var errs []error
	for _, key := range order {
		g := groups[key]
		if len(g.wants) < 2 {
			continue
		}
		if err := g.b.ApplyBatch(ctx, g.env, g.wants); err != nil {
			kind, _, _ := strings.Cut(key, "\x00")
			errs = append(errs, fmt.Errorf("batch of %d %s resources: %w", len(g.wants), kind, err))
		}
	}
	return errors.Join(errs...)
}
