package fleete2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/fuellab"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// The fleet: fuellab.Nodes(fleetSize), every agentEvery-th node an agent
// (ids 4, 8, …, 200: computes, Ceph OSDs and cinder nodes), the
// controllers and the others local nodes of the server.
const (
	fleetSize  = 200
	agentEvery = 4
	clusterID  = "fleet"
)

// A task's command waits holdSeconds where the test asks it to (a file
// hold-<task> in the node's root), long enough to kill its agent in the
// middle of it. Two agents of computes are killed: the first in the
// middle of the graph (top-role-compute), and it comes back; the second
// near its start (globals), and it never does.
const (
	holdSeconds   = 5
	restartedNode = "4"
	restartedTask = "top-role-compute"
	lostNode      = "24"
	lostTask      = "globals"
	// lostWait is the node wait of the second execution.
	lostWait = "20s"
)

// commandKind is the kind of the command tasks' steps.
const commandKind = "exec"

// historyLimit bounds every workflow history of an execution.
const historyLimit = 10_000

// stepCommand is what each command task runs on its node: it appends the
// task's id to runs.log once done, and, where the node's root holds
// hold-<task>, first marks that it started and waits holdSeconds.
func stepCommand(task string) string {
	return fmt.Sprintf("if [ -e hold-%[1]s ]; then touch %[1]s.started; sleep %[2]d; fi; echo %[1]s >> runs.log", task, holdSeconds)
}

// taskID is what stepCommand may put in a file name and a shell word.
var taskID = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// fleet is the test's installation: the server, the agents, where each
// node applies.
type fleet struct {
	t      *testing.T
	srv    *serverProc
	c      *client.Client
	specs  map[string]testenv.AgentSpec
	agents map[string]*testenv.Agent
	// roots are where each node applies, by node id; the control plane's
	// steps run in the server's working directory.
	roots map[string]string
	// anyOf are the graph's cross dependencies with policy any.
	anyOf map[string]map[string]bool
}

// TestFuelReleaseOnAgentsAndLocalNodes executes fuel-library's release
// graph (every command a record of itself) through the API of a `cairn
// server` with its defaults, on 200 nodes: 50 served by `cairn agent`
// processes, 150 by the server. One agent is killed with SIGKILL in the
// middle of a step and started again: the step cut off waits, unknown,
// for a decision and is retried; the execution completes, every
// step succeeded or skipped by its condition, alike on every node of a
// role whoever serves it, each node's steps in their order, none twice,
// no workflow history above 10,000 events. Then the server restarts
// under the agents, which reach the new one without a restart of their
// own, and the graph is executed again with another agent killed for
// good: it fails saying that node has no agent polling, everything else
// it ran having run once. 2 to 2½ minutes on 2 CPUs shared with other work.
func TestFuelReleaseOnAgentsAndLocalNodes(t *testing.T) {
	lib := testenv.FuelLibrary(t)
	dev := testenv.Temporal(t)
	bin := testenv.BuildCairn(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(t0).Seconds(), what) }

	srv := startServer(t, bin, dir, dev.HostPort, nil)
	f := &fleet{t: t, srv: srv, c: srv.client, specs: map[string]testenv.AgentSpec{}, roots: map[string]string{model.ControlPlane: srv.workdir}}
	phase("cairn server ready")

	rel, err := fuellab.ReadRelease(lib, func(task string) string {
		// Task ids go into file names and shell words unquoted.
		assert.Regexp(t, taskID, task)
		return stepCommand(task)
	})
	require.NoError(t, err)
	f.anyOf = anyOf(t, rel.YAML)
	release, err := f.c.CreateRelease(ctx, model.ReleaseInput{ID: "fuel", Name: "fuel-library"})
	require.NoError(t, err)
	info, err := f.c.PutGraph(ctx, model.LayerRelease, release.ID, "default", client.Document{Data: rel.YAML, Format: "yaml"})
	require.NoError(t, err)
	require.Equal(t, rel.Tasks, info.Tasks)
	nodes := fuellab.Nodes(fleetSize)
	for i := agentEvery - 1; i < len(nodes); i += agentEvery {
		nodes[i].Mode = model.NodeAgent
	}
	_, err = f.c.CreateCluster(ctx, model.ClusterInput{ID: clusterID, Name: clusterID, ReleaseID: release.ID, Nodes: nodes, Settings: fuellab.Settings()})
	require.NoError(t, err)
	var specs []testenv.AgentSpec
	for _, n := range nodes {
		if n.Mode != model.NodeAgent {
			f.roots[n.ID] = filepath.Join(dir, "data", "nodes", clusterID, n.ID)
			continue
		}
		tok, err := f.c.IssueNodeToken(ctx, clusterID, n.ID)
		require.NoError(t, err)
		spec := testenv.AgentSpec{Bin: bin, Server: srv.url(), Temporal: dev.HostPort, Token: tok.Token, Node: n.ID,
			Root: filepath.Join(dir, "agents", n.ID), Log: filepath.Join(dir, "agents", n.ID+".log")}
		f.specs[n.ID], f.roots[n.ID] = spec, spec.Root
		specs = append(specs, spec)
	}
	require.Len(t, specs, fleetSize/agentEvery)
	f.agents, err = testenv.StartAgents(specs)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, p := range f.agents {
			p.Crash()
		}
	})
	f.waitPolled(ctx, dev, nodes)
	phase(fmt.Sprintf("%d agents and %d local nodes polling", len(specs), fleetSize-len(specs)))

	// The first execution: an agent dies in the middle of a step and
	// comes back.
	f.hold(restartedNode, restartedTask)
	ex, err := f.c.ExecuteGraph(ctx, clusterID, contract.GraphRequest{})
	require.NoError(t, err)
	f.waitStarted(ctx, restartedNode, restartedTask)
	f.agents[restartedNode].Crash()
	phase(fmt.Sprintf("agent of node %s killed in the middle of %s", restartedNode, restartedTask))
	running, err := f.c.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	require.False(t, running.Finished(), "the execution finished without node %s's agent: %s", restartedNode, running.Status)
	f.agents[restartedNode], err = f.specs[restartedNode].Start()
	require.NoError(t, err)
	phase("agent restarted")
	// The command the kill cut off may or may not have done its work: it
	// waits, unknown, for a decision, which runs it again.
	cut := restartedTask + "@" + restartedNode
	waiting, err := f.c.WaitFor(ctx, ex.ID, 500*time.Millisecond, func(e *model.Execution) bool {
		return e.Finished() || e.Status == model.ExecWaiting
	})
	require.NoError(t, err)
	require.Equal(t, model.ExecWaiting, waiting.Status, "execution %s: %s", waiting.ID, waiting.Error)
	decided, err := f.c.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry, Step: cut})
	require.NoError(t, err)
	require.Equal(t, cut, decided.Step)
	phase(fmt.Sprintf("%s unknown, retried", cut))
	done, err := f.c.Wait(ctx, ex.ID, 500*time.Millisecond)
	require.NoError(t, err)
	phase(fmt.Sprintf("execution %s", done.Status))
	require.Equal(t, model.ExecCompleted, done.Status, "execution %s: %s", done.ID, done.Error)
	steps, graph := f.readRun(ctx, done)
	require.Len(t, steps, len(graph), "the steps listed and the graph differ")
	f.checkRun(steps, graph, "")
	f.checkAlike(steps, nodes)
	held := stepOf(steps, restartedTask+"@"+restartedNode)
	require.NotNil(t, held, "no %s step on node %s", restartedTask, restartedNode)
	assert.GreaterOrEqual(t, held.Attempts, 2, "%s: want a second attempt after its agent died", held.ID)
	f.checkHistories(ctx, dev, done)
	phase("first execution checked")

	// The server restarts under its agents, which reach the new one
	// without a restart of their own; the node wait is made shorter than
	// its two minutes, so the lost agent is noticed sooner.
	f.rotateLogs("run1")
	srv.restart(map[string]string{"CAIRN_NODE_WAIT": lostWait})
	phase("cairn server restarted")

	// The second execution: an agent dies and never comes back.
	f.hold(lostNode, lostTask)
	ex, err = f.c.ExecuteGraph(ctx, clusterID, contract.GraphRequest{Force: true})
	require.NoError(t, err)
	f.waitStarted(ctx, lostNode, lostTask)
	f.agents[lostNode].Crash()
	delete(f.agents, lostNode)
	phase(fmt.Sprintf("agent of node %s killed for good in the middle of %s", lostNode, lostTask))
	done, err = f.c.Wait(ctx, ex.ID, 500*time.Millisecond)
	require.NoError(t, err)
	phase(fmt.Sprintf("execution %s", done.Status))
	require.Equal(t, model.ExecFailed, done.Status, "execution %s: %s", done.ID, done.Error)
	want := fmt.Sprintf("node %s has no agent polling (task queue %s, waited %s)", lostNode, workflows.NodeTaskQueue(clusterID, lostNode), lostWait)
	assert.Contains(t, done.Error, want)
	steps, graph = f.readRun(ctx, done)
	f.checkRun(steps, graph, lostNode)
	lost := stepOf(steps, lostTask+"@"+lostNode)
	require.NotNil(t, lost, "no %s step on node %s", lostTask, lostNode)
	assert.Equal(t, model.StatusFailed, lost.Status, "%+v", lost)
	assert.Contains(t, lost.Error, want)
	// Every other agent ran steps of this execution, reading and writing
	// their records through the restarted server.
	ran := map[string]int{}
	for _, s := range steps {
		if s.Status == model.StatusSucceeded {
			ran[s.Node]++
		}
	}
	for node := range f.agents {
		assert.NotZero(t, ran[node], "the agent of node %s ran nothing after the server restarted", node)
	}
	f.checkHistories(ctx, dev, done)
	phase("second execution checked")
}
