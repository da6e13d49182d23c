package fleete2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"gopkg.in/yaml.v3"

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
	specs  map[string]agentSpec
	agents map[string]*agentProc
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
// middle of a step and started again: the execution completes, every
// step succeeded or skipped by its condition, alike on every node of a
// role whoever serves it, each node's steps in their order, none twice,
// no workflow history above 10,000 events. Then the server restarts
// under the agents, which reach the new one without a restart of their
// own, and the graph is executed again with another agent killed for
// good: it fails saying that node has no agent polling, everything else
// it ran having run once. About 2 minutes on 2 CPUs.
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
	f := &fleet{t: t, srv: srv, c: srv.client, specs: map[string]agentSpec{}, roots: map[string]string{model.ControlPlane: srv.workdir}}
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
	var specs []agentSpec
	for _, n := range nodes {
		if n.Mode != model.NodeAgent {
			f.roots[n.ID] = filepath.Join(dir, "data", "nodes", clusterID, n.ID)
			continue
		}
		tok, err := f.c.IssueNodeToken(ctx, clusterID, n.ID)
		require.NoError(t, err)
		spec := agentSpec{bin: bin, server: srv.url(), temporal: dev.HostPort, token: tok.Token, node: n.ID,
			root: filepath.Join(dir, "agents", n.ID), log: filepath.Join(dir, "agents", n.ID+".log")}
		f.specs[n.ID], f.roots[n.ID] = spec, spec.root
		specs = append(specs, spec)
	}
	require.Len(t, specs, fleetSize/agentEvery)
	f.agents, err = startAgents(specs)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, p := range f.agents {
			p.crash()
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
	f.agents[restartedNode].crash()
	phase(fmt.Sprintf("agent of node %s killed in the middle of %s", restartedNode, restartedTask))
	running, err := f.c.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	require.False(t, running.Finished(), "the execution finished without node %s's agent: %s", restartedNode, running.Status)
	f.agents[restartedNode], err = f.specs[restartedNode].start()
	require.NoError(t, err)
	phase("agent restarted")
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
	f.agents[lostNode].crash()
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

// hold makes task wait on node, and no task anywhere else.
func (f *fleet) hold(node, task string) {
	f.t.Helper()
	for _, root := range f.roots {
		for _, pattern := range []string{"hold-*", "*.started"} {
			old, _ := filepath.Glob(filepath.Join(root, pattern))
			for _, p := range old {
				require.NoError(f.t, os.Remove(p))
			}
		}
	}
	root := f.roots[node]
	require.NoError(f.t, os.MkdirAll(root, 0o755))
	require.NoError(f.t, os.WriteFile(filepath.Join(root, "hold-"+task), nil, 0o644))
}

// waitStarted waits until task runs on node.
func (f *fleet) waitStarted(ctx context.Context, node, task string) {
	f.t.Helper()
	marker := filepath.Join(f.roots[node], task+".started")
	for {
		if _, err := os.Stat(marker); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			f.t.Fatalf("%s never started on node %s", task, node)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitPolled waits until every node's queue has a poller.
func (f *fleet) waitPolled(ctx context.Context, dev *testenv.DevServer, nodes []model.Node) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, n := range nodes {
		queue := workflows.NodeTaskQueue(clusterID, n.ID)
		for {
			resp, err := dev.Client.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
			if err == nil && len(resp.GetPollers()) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				f.t.Fatalf("node %s: nothing polls %s", n.ID, queue)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// rotateLogs renames each node's runs.log to <name>.log.
func (f *fleet) rotateLogs(name string) {
	f.t.Helper()
	for _, root := range f.roots {
		err := os.Rename(filepath.Join(root, "runs.log"), filepath.Join(root, name+".log"))
		if !os.IsNotExist(err) {
			require.NoError(f.t, err)
		}
	}
}

// readRun reads a finished execution's steps, every page, and its graph.
func (f *fleet) readRun(ctx context.Context, ex *model.Execution) (map[string]model.StepProgress, []model.StepDeps) {
	f.t.Helper()
	steps := map[string]model.StepProgress{}
	for {
		page, err := f.c.Steps(ctx, ex.ID, len(steps), 5000)
		require.NoError(f.t, err)
		for _, s := range page.Steps {
			steps[s.ID] = s
		}
		if len(page.Steps) == 0 || len(steps) >= page.Entries {
			break
		}
	}
	graph, err := f.c.ExecutionGraph(ctx, ex.ID)
	require.NoError(f.t, err)
	ids := map[string]bool{}
	for _, d := range graph {
		ids[d.ID] = true
	}
	for id := range steps {
		require.True(f.t, ids[id], "step %s is not in the execution's graph", id)
	}
	return steps, graph
}

func stepOf(steps map[string]model.StepProgress, id string) *model.StepProgress {
	if s, ok := steps[id]; ok {
		return &s
	}
	return nil
}

// checkRun compares an execution's steps with what its nodes recorded:
// each succeeded command step's task is in its node's runs.log exactly
// once and nothing else is there; on each node a step's record comes
// after those of the command steps it waits for (through any structural
// steps between); a step waiting for another node's step started after
// that one ended. lost is the node whose agent never came back ("" for
// none): every step but its own succeeded or was skipped by its
// condition.
func (f *fleet) checkRun(steps map[string]model.StepProgress, graph []model.StepDeps, lost string) {
	t := f.t
	t.Helper()
	deps := map[string]model.StepDeps{}
	for _, d := range graph {
		deps[d.ID] = d
	}
	// The records each node's runs.log holds, and where.
	pos := map[string]int{} // step id → line of its node's log
	lines := 0
	for node, root := range f.roots {
		if node == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, "runs.log"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for i, task := range strings.Fields(string(b)) {
			id := task + "@" + node
			if _, twice := pos[id]; twice {
				t.Errorf("%s ran twice on node %s", task, node)
			}
			pos[id] = i
			lines++
		}
	}
	ran, statuses := 0, map[model.Status]int{}
	for id, s := range steps {
		statuses[s.Status]++
		command := deps[id].Kind == commandKind
		if lost == "" {
			assert.Contains(t, []model.Status{model.StatusSucceeded, model.StatusSkipped}, s.Status, "%s: %+v", id, s)
		} else if s.Status == model.StatusFailed {
			assert.Equal(t, lost, s.Node, "%s failed: %s", id, s.Error)
		}
		_, recorded := lookup(pos, s)
		switch {
		case command && s.Status == model.StatusSucceeded:
			ran++
			assert.True(t, recorded, "%s succeeded and did not run", id)
		case recorded && s.Status == model.StatusFailed && s.Node == lost:
			// The unit of the lost node's steps failed as a whole: the
			// steps it had run before its agent died are reported with
			// it.
			ran++
		case recorded:
			t.Errorf("%s ran and is %s", id, s.Status)
		}
		if s.Status != model.StatusSucceeded || !command {
			continue
		}
		// Of the steps of another node it waits for, all must have ended
		// before its unit started; of a cross dependency with policy
		// any, one.
		anyEnded := map[string]bool{}
		for _, d := range f.nearestCommands(deps, steps, id) {
			dep := steps[d]
			if dep.Node == s.Node {
				a, _ := lookup(pos, dep)
				b, _ := lookup(pos, s)
				assert.Less(t, a, b, "%s ran before %s, which it waits for", id, d)
				continue
			}
			ended := dep.EndedAt != nil && s.StartedAt != nil && !s.StartedAt.Before(*dep.EndedAt)
			if depTask := taskOf(d); f.anyOf[taskOf(id)][depTask] {
				anyEnded[depTask] = anyEnded[depTask] || ended
				continue
			}
			assert.True(t, ended, "%s started at %v, before %s ended at %v", id, s.StartedAt, d, dep.EndedAt)
		}
		for depTask, ok := range anyEnded {
			assert.True(t, ok, "%s started before any %s step ended", id, depTask)
		}
	}
	assert.Equal(t, ran, lines, "records on the nodes against command steps succeeded")
	f.t.Logf("%d steps: %v; %d commands ran", len(steps), statuses, ran)
}

// taskOf is the task of step id "task@node".
func taskOf(id string) string {
	task, _, _ := strings.Cut(id, "@")
	return task
}

// anyOf reads a graph's cross dependencies with policy any: task → the
// tasks it waits for one step of.
func anyOf(t testing.TB, graph []byte) map[string]map[string]bool {
	t.Helper()
	var tasks []struct {
		ID    string `yaml:"id"`
		Cross any    `yaml:"cross-depends"` // a list, or a yaql expression
	}
	require.NoError(t, yaml.Unmarshal(graph, &tasks))
	out := map[string]map[string]bool{}
	for _, task := range tasks {
		list, _ := task.Cross.([]any)
		for _, item := range list {
			c, _ := item.(map[string]any)
			if name, ok := c["name"].(string); ok && c["policy"] == "any" {
				if out[task.ID] == nil {
					out[task.ID] = map[string]bool{}
				}
				out[task.ID][name] = true
			}
		}
	}
	return out
}

// checkAlike checks that nodes of one role end with the same steps in the
// same states, whichever serves them (an agent, killed or not, or the
// server): the graph gives them the same tasks and conditions.
func (f *fleet) checkAlike(steps map[string]model.StepProgress, nodes []model.Node) {
	f.t.Helper()
	states := map[string][]string{} // node → its steps' task=status, sorted
	for _, s := range steps {
		states[s.Node] = append(states[s.Node], taskOf(s.ID)+"="+string(s.Status))
	}
	first := map[string]model.Node{} // role → its first node
	for _, n := range nodes {
		slices.Sort(states[n.ID])
		role := n.Roles[0]
		if _, ok := first[role]; !ok {
			first[role] = n
			continue
		}
		ref := first[role]
		assert.Equal(f.t, states[ref.ID], states[n.ID], "node %s (%s, %s) and node %s (%s, %s)", n.ID, role, modeOf(n), ref.ID, role, modeOf(ref))
	}
}

func modeOf(n model.Node) model.NodeMode {
	if n.Mode == "" {
		return model.NodeLocal
	}
	return n.Mode
}

// lookup is the line of step s's record in its node's log.
func lookup(pos map[string]int, s model.StepProgress) (int, bool) {
	i, ok := pos[s.ID]
	return i, ok
}

// nearestCommands are the succeeded command steps id waits for, directly
// or through steps that ran nothing (stages, groups, skipped steps).
func (f *fleet) nearestCommands(deps map[string]model.StepDeps, steps map[string]model.StepProgress, id string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		for _, d := range deps[id].DependsOn {
			if seen[d] {
				continue
			}
			seen[d] = true
			s, ok := steps[d]
			if !ok {
				continue
			}
			if deps[d].Kind == commandKind && s.Status == model.StatusSucceeded {
				out = append(out, d)
				continue
			}
			walk(d)
		}
	}
	walk(id)
	return out
}

// checkHistories walks the execution's workflow and every child it
// started: none has more than historyLimit events.
func (f *fleet) checkHistories(ctx context.Context, dev *testenv.DevServer, ex *model.Execution) {
	f.t.Helper()
	queue := [][2]string{{ex.WorkflowID, ex.RunID}}
	largest, workflows := 0, 0
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		events := 0
		it := dev.Client.GetWorkflowHistory(ctx, r[0], r[1], false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(f.t, err)
			events++
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				queue = append(queue, [2]string{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
			}
		}
		assert.LessOrEqual(f.t, events, historyLimit, "history of %s", r[0])
		largest = max(largest, events)
		workflows++
	}
	f.t.Logf("execution %s: %d workflows, the largest history %d events", ex.ID, workflows, largest)
}
