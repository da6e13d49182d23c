package clustere2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/failover"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// graphSteps is the length of the graph's chain, its steps alternating
// between the two agents' nodes.
const graphSteps = 60

var graphNodes = []string{"node-a", "node-b"}

func chainGraph(path string) string {
	var b strings.Builder
	for i := range graphSteps {
		node := graphNodes[i%len(graphNodes)]
		fmt.Fprintf(&b, "- id: s%d\n  type: shell\n  roles: [%s]\n", i, node)
		if i > 0 {
			// The step before runs on the other node.
			fmt.Fprintf(&b, "  cross-depends: [{name: s%d, role: %s}]\n", i-1, graphNodes[(i-1)%len(graphNodes)])
		}
		fmt.Fprintf(&b, "  parameters: {cmd: '%s'}\n", chainCommand(i, graphSleep, node, path))
	}
	return b.String()
}

// A graph on two `cairn agent` processes survives Temporal's faults as an
// apply does: each step ran once on its node, none failed or took a
// second attempt, the execution completes.
func TestGraphOnAgentsSurvivesTemporalFaults(t *testing.T) {
	cluster := testenv.TemporalCluster(t)
	bin := testenv.BuildCairn(t)
	env := failover.Env{Bin: bin, Temporal: cluster.HostPort,
		Database: testenv.FreshPostgres(t), Queue: "cluster-graph-" + failover.RandomHex(5)}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	srv := failover.StartServer(t, env, dir, "srv")
	c := srv.Client
	id := "g" + failover.RandomHex(4)
	_, err := c.CreateRelease(ctx, model.ReleaseInput{ID: id, Name: id})
	require.NoError(t, err)
	linesPath := filepath.Join(dir, "lines")
	_, err = c.PutGraph(ctx, model.LayerRelease, id, "default", client.Document{Format: "yaml", Data: []byte(chainGraph(linesPath))})
	require.NoError(t, err)
	var nodes []model.Node
	for _, n := range graphNodes {
		nodes = append(nodes, model.Node{ID: n, Roles: []string{n}, Mode: model.NodeAgent})
	}
	_, err = c.CreateCluster(ctx, model.ClusterInput{ID: id, Name: id, ReleaseID: id, Nodes: nodes})
	require.NoError(t, err)
	var specs []testenv.AgentSpec
	for _, n := range graphNodes {
		tok, err := c.IssueNodeToken(ctx, id, n)
		require.NoError(t, err)
		specs = append(specs, testenv.AgentSpec{Bin: bin, Server: srv.URL, Temporal: cluster.HostPort, Token: tok.Token,
			Node: n, Root: filepath.Join(dir, "agents", n), Log: filepath.Join(dir, "agents", n+".log")})
	}
	agents, err := testenv.StartAgents(specs)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, a := range agents {
			a.Crash()
		}
	})

	started, err := c.ExecuteGraph(ctx, id, contract.GraphRequest{})
	require.NoError(t, err)
	ch := chain{cluster: cluster, path: linesPath, total: graphSteps, workflowID: started.WorkflowID}
	stalls := ch.injectFaults(ctx, t)

	done, err := c.Wait(ctx, started.ID, 250*time.Millisecond)
	require.NoError(t, err)
	requireNoStepFailed(t, done, graphSteps)
	ch.requireOnce(t)
	for _, l := range ch.lines(t) {
		require.Equal(t, graphNodes[l.Step%len(graphNodes)], l.Server, "step s%d ran on the wrong node", l.Step)
	}
	logStalls(t, "graph on agents", stalls)
}
