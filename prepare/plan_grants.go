package prepare

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// WriteGrants keeps, for each agent node of the cluster that has steps in
// the execution, the contract.NodeGrant the agent API checks that node's
// requests against: its steps and batch units, the steps elsewhere whose
// outputs they read, and the env refs and secrets they read by name (see
// ParamRefs). Local nodes are served inside the server and need none; an
// execution without a cluster has no agent steps. Cost: one store write,
// and a scan of each agent step's spec for refs.
func WriteGrants(ctx context.Context, w PlanWriter, execID, cluster string, nodes []model.Node, units []contract.Unit, members [][]*planner.StoredStep) error {
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
	refs := map[string]*ParamRefs{}
	for i, u := range units {
		node := u.Node
		if !agents[node] {
			continue
		}
		g := grants[node]
		if g == nil {
			g = &contract.NodeGrant{Cluster: cluster, Node: node, Steps: []string{}}
			grants[node], deps[node], refs[node] = g, map[string]bool{}, NewParamRefs()
		}
		if u.Batch {
			g.Units = append(g.Units, contract.UnitKey(u.Index))
		}
		for _, s := range members[i] {
			g.Steps = append(g.Steps, s.ID)
			for _, d := range planner.Deps(&s.Step) {
				deps[node][d] = true
			}
			refs[node].Add(&s.Step)
		}
	}
	raw := make(map[string][]byte, len(grants))
	for node, g := range grants {
		for d := range deps[node] {
			g.Deps = append(g.Deps, d)
		}
		slices.Sort(g.Deps)
		g.EnvRefs, g.Secrets = refs[node].Sorted()
		b, err := json.Marshal(g)
		if err != nil {
			return err
		}
		raw[node] = b
	}
	return w.PutStepDataBatch(ctx, execID, contract.DataNodeGrant, raw)
}
