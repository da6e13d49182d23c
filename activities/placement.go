package activities

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/stepdata"
)

// checkPlacement refuses a unit meant for another worker, before anything
// of it runs: a node's worker (Deps.Node.Name set) runs only units of its
// own cluster and node whose steps all name that node; the control plane's
// worker runs only control-plane units. The unit's cluster and node in the
// input are claims; the steps loaded from the store are checked too. A
// refusal is a non-retryable WrongNode error.
func (a *Activities) checkPlacement(cluster string, u contract.Unit, steps []*planner.StoredStep) error {
	mine := a.d.Node.Name
	where := "the control plane"
	if mine != "" {
		where = fmt.Sprintf("node %q of cluster %q", mine, a.d.Cluster)
	}
	refuse := func(what string) error {
		msg := fmt.Sprintf("%s reached the worker of %s; it runs only its own steps, so nothing was run", what, where)
		return temporal.NewNonRetryableApplicationError(msg, contract.WrongNodeType, nil)
	}
	if mine == "" {
		if stepdata.NodeName(u.Node) != stepdata.NodeName("") {
			return refuse(fmt.Sprintf("unit %d for node %q", u.Index, u.Node))
		}
	} else if cluster != a.d.Cluster || u.Node != mine {
		return refuse(fmt.Sprintf("unit %d for node %q of cluster %q", u.Index, u.Node, cluster))
	}
	for _, s := range steps {
		if stepdata.NodeName(s.Node) != stepdata.NodeName(mine) {
			return refuse(fmt.Sprintf("step %s for node %q", s.ID, stepdata.NodeName(s.Node)))
		}
	}
	return nil
}
