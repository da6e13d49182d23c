package activities

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// writeGrants keeps, for each agent node of the cluster that has steps in
// the execution, the contract.NodeGrant the agent API checks that node's
// requests against. Local nodes are served inside the server and need
// none; an execution without a cluster has no agent steps.
func (a *Activities) writeGrants(ctx context.Context, execID, cluster string, nodes []model.Node, units []contract.Unit, members [][]*planner.StoredStep) error {
	agents := map[string]bool{}
	for _, n := range nodes {
		if n.Mode == model.NodeAgent {
			agents[n.ID] = true
		}
	}
	if cluster == "" || len(agents) == 0 {
		return nil
	}
	grants := map[string]*contract.NodeGrant{}
	deps := map[string]map[string]bool{}
	refs := map[string]*paramRefs{}
	for i, u := range units {
		node := u.Node
		if !agents[node] {
			continue
		}
		g := grants[node]
		if g == nil {
			g = &contract.NodeGrant{Cluster: cluster, Node: node, Steps: []string{}}
			grants[node], deps[node], refs[node] = g, map[string]bool{}, newParamRefs()
		}
		if u.Batch {
			g.Units = append(g.Units, contract.UnitKey(u.Index))
		}
		for _, s := range members[i] {
			g.Steps = append(g.Steps, s.ID)
			for _, d := range planner.Deps(&s.Step) {
				deps[node][d] = true
			}
			refs[node].add(&s.Step)
		}
	}
	raw := make(map[string][]byte, len(grants))
	for node, g := range grants {
		for d := range deps[node] {
			g.Deps = append(g.Deps, d)
		}
		slices.Sort(g.Deps)
		g.EnvRefs, g.Secrets = refs[node].sorted()
		b, err := json.Marshal(g)
		if err != nil {
			return err
		}
		raw[node] = b
	}
	return a.d.Store.PutStepDataBatch(ctx, execID, contract.DataNodeGrant, raw)
}

// paramRefs are the env refs and secrets a node's steps read by name: the
// parameters the agent API gives that node. A name computed at run time
// (env .vars.key) is not seen; such a step reads the agent's own
// environment and secrets, as every step on an agent did before.
type paramRefs struct{ env, secrets map[string]bool }

func newParamRefs() *paramRefs {
	return &paramRefs{env: map[string]bool{}, secrets: map[string]bool{}}
}

// add notes what s's spec and condition read.
func (r *paramRefs) add(s *model.Step) {
	env, secrets, _ := expr.Scan(s.Spec)
	condEnv, condSecrets, _ := expr.ScanCondition(s.Condition)
	for _, k := range slices.Concat(env, condEnv) {
		r.env[k] = true
	}
	for _, k := range slices.Concat(secrets, condSecrets) {
		r.secrets[k] = true
	}
}

func (r *paramRefs) sorted() (env, secrets []string) {
	return slices.Sorted(maps.Keys(r.env)), slices.Sorted(maps.Keys(r.secrets))
}
