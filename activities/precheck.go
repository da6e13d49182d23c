package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
)

// precheck runs the kinds' prechecks over the steps of an apply
// prepare.PrecheckSteps picks, before any unit runs. Each program is
// initialized once (the provider caches its answer). A spec holding
// expressions or refs is checked on what is known: errors at those values
// wait for the run (see providers.Prechecker). A failure is a config error
// naming every resource at fault with its document and line.
func (a *Activities) precheck(ctx context.Context, execID string, pkg *model.Package, members [][]*planner.StoredStep) error {
	if a.d.Registry == nil {
		return nil
	}
	kinds := map[string]bool{}
	for _, k := range a.d.Registry.PrecheckKinds() {
		kinds[k] = true
	}
	steps := prepare.PrecheckSteps(members, kinds)
	if len(steps) == 0 {
		return nil
	}
	params, err := a.unitParams(ctx, execID, nil)
	if err != nil {
		return err
	}
	var msgs []string
	for _, s := range steps {
		req := providers.Request{Kind: s.Base, Name: s.Name, Spec: s.Spec, Node: a.node(s), Noop: true, Verbose: params.Verbose}
		err := a.d.Registry.Precheck(ctx, req)
		if err == nil {
			continue
		}
		if !providers.IsConfigError(err) {
			return fmt.Errorf("check %s: %w", s.ID, err)
		}
		msgs = append(msgs, fmt.Sprintf("%s%s: %v", prepare.StepWhere(pkg, s), s.RecordKind+"/"+s.Name, attrPath(err)))
	}
	if len(msgs) > 0 {
		return configError(fmt.Sprintf("nothing was applied: %d resource(s) failed their kind's check: %s", len(msgs), strings.Join(msgs, "; ")))
	}
	return nil
}

// attrPath renders a config error with its attribute as a spec path
// ("spec.config: …").
func attrPath(err error) string {
	var ce *providers.ConfigError
	if errors.As(err, &ce) && ce.Attr != "" && err == error(ce) {
		return "spec." + ce.Error()
	}
	return err.Error()
}
