package upgrade

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// previous names the builds an upgrade starts from: the last release
// and the parent commit. The last release is the newest of those whose
// histories workflows/replay keeps (testdata/<release>/COMMIT names the
// commit each was recorded at), so a clone without tags finds it too;
// where tags are present, the latest tag HEAD descends from must be that
// release (a release tagged without its histories recorded fails here).
func previous() (map[string]string, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return nil, err
	}
	release, commit, err := lastRelease(root)
	if err != nil {
		return nil, err
	}
	if tag, err := gitOutput(root, "describe", "--tags", "--abbrev=0", "HEAD"); err == nil {
		if tag = strings.TrimSpace(tag); tag != release {
			return nil, fmt.Errorf("the latest tag is %s but the newest histories kept are %s's: record %s's (docs/operating.md, Recording histories at a release)", tag, release, tag)
		}
	}
	out := map[string]string{commit: release}
	parent, err := commitOf("HEAD^")
	if err != nil {
		return nil, err
	}
	if _, ok := out[parent]; !ok {
		out[parent] = "HEAD^"
	}
	return out, nil
}

// lastRelease returns the release among workflows/replay/testdata/*/COMMIT
// whose commit is the newest ancestor of HEAD, and that commit.
func lastRelease(root string) (release, commit string, err error) {
	files, err := filepath.Glob(filepath.Join(root, "workflows", "replay", "testdata", "*", "COMMIT"))
	if err != nil {
		return "", "", err
	}
	depth := -1
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		c, err := commitOf(strings.TrimSpace(string(b)))
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", f, err)
		}
		if _, err := gitOutput(root, "merge-base", "--is-ancestor", c, "HEAD"); err != nil {
			continue
		}
		n, err := gitOutput(root, "rev-list", "--count", c)
		if err != nil {
			return "", "", err
		}
		if d, _ := strconv.Atoi(strings.TrimSpace(n)); d > depth {
			depth, release, commit = d, filepath.Base(filepath.Dir(f)), c
		}
	}
	if commit == "" {
		return "", "", fmt.Errorf("no release HEAD descends from has its histories kept (workflows/replay/testdata/<release>/COMMIT)")
	}
	return release, commit, nil
}

// TestRollingUpgrade starts, on `cairn server`s and `cairn agent`s of the
// last release and of the parent commit (both built at once, and kept by
// commit), the work an upgrade must not lose: an apply whose command is
// running, a graph execution on agents paused on a failed step, a plan
// waiting for approval and a drift schedule. The servers, then the
// agents, are replaced one at a time by this build's; between the two an
// old agent ends a step and starts the next under the new servers, and
// that step is in flight while its agent is replaced. Each piece of work
// then completes on the new build: the apply's remaining commands run on
// new servers, the step handed back by the old agent ends on the new one
// (a node queue the new build names otherwise would strand it), the
// paused step is retried once its cause is fixed and runs on a new agent,
// the plan is approved and applied, and the schedule fires a check. Both
// upgrades share one dev server and run side by side.
func TestRollingUpgrade(t *testing.T) {
	testenv.PostgresURL(t) // before building: without PostgreSQL the test cannot run
	revs, err := previous()
	require.NoError(t, err)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		bins = map[string]string{}
		errs []error
	)
	for commit := range revs {
		wg.Go(func() {
			bin, err := buildAt(commit)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			bins[commit] = bin
		})
	}
	current := testenv.BuildCairn(t)
	wg.Wait()
	require.Empty(t, errs, "building the previous builds")
	dev := testenv.Temporal(t)
	for commit, rev := range revs {
		t.Run("from "+rev, func(t *testing.T) {
			t.Parallel()
			t.Logf("upgrading from %s (%s)", rev, commit)
			rollingUpgrade(t, bins[commit], current, dev.HostPort, testenv.FreshPostgres(t))
		})
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// graphTasks is the graph the agents run: t1 on both nodes, then t2 on
// the compute node, which fails until flag exists, and on the storage
// node t3, which runs until gate3 exists (its old agent ends it against
// the new servers), then t4, which runs until gate4 exists (so it is in
// flight while its agent is replaced). Each says which process ran it.
func graphTasks(flag, gate3, gate4 string) string {
	return fmt.Sprintf(`[{"id": "t1", "type": "shell", "roles": ["*"], "parameters": {"cmd": "echo \"t1 ${TMPDIR##*/}\" >> order"}},
		{"id": "t2", "type": "shell", "roles": ["compute"], "requires": ["t1"], "parameters": {"cmd": "test -f %s && echo \"t2 ${TMPDIR##*/}\" >> order"}},
		{"id": "t3", "type": "shell", "roles": ["storage"], "requires": ["t1"], "parameters": {"cmd": "while [ ! -f %s ]; do sleep 0.1; done; echo \"t3 ${TMPDIR##*/}\" >> order"}},
		{"id": "t4", "type": "shell", "roles": ["storage"], "requires": ["t3"], "parameters": {"cmd": "echo \"${TMPDIR##*/}\" >> t4.started; while [ ! -f %s ]; do sleep 0.1; done; echo \"t4 ${TMPDIR##*/}\" >> order"}}]`, flag, gate3, gate4)
}

// applyPackage is an apply of a file and a chain of three commands, each
// writing which server ran it to lines; the second waits until gate
// exists, so the apply is in flight until the test lets it go on.
func applyPackage(dir string) string {
	return fmt.Sprintf("kind: File\nmetadata: {name: f}\nspec: {path: %[1]s/f, content: \"f\\n\"}\n---\n"+
		"kind: Exec\nmetadata: {name: e1}\nspec: {command: 'echo \"e1 ${TMPDIR##*/}\" >> %[1]s/lines'}\ndependsOn: [File/f]\n---\n"+
		"kind: Exec\nmetadata: {name: e2}\nspec: {command: 'while [ ! -f %[1]s/gate ]; do sleep 0.1; done; echo \"e2 ${TMPDIR##*/}\" >> %[1]s/lines'}\ndependsOn: [Exec/e1]\n---\n"+
		"kind: Exec\nmetadata: {name: e3}\nspec: {command: 'echo \"e3 ${TMPDIR##*/}\" >> %[1]s/lines'}\ndependsOn: [Exec/e2]\n", dir)
}

// readLines is the lines of a file, none while it does not exist (or
// cannot be read: what the test expects then shows what is missing).
func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func yamlDoc(s string) *client.Document { return &client.Document{Data: []byte(s), Format: "yaml"} }

func rollingUpgrade(t *testing.T, oldBin, newBin, temporal, database string) {
	dir := t.TempDir()
	id := randomHex(4)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	queue := "cairn-upgrade-" + id
	servers := []*server{newServerSlot(t, "srv-1", temporal, database, queue), newServerSlot(t, "srv-2", temporal, database, queue)}
	for _, s := range servers {
		s.start(t, dir, "old", oldBin)
	}
	// API calls go to the second server while the first is replaced and
	// to the first afterwards: an operator's load balancer would.
	api := func() *client.Client {
		for _, s := range servers {
			select {
			case <-s.proc.done:
			default:
				return s.client
			}
		}
		return servers[0].client // none is up: its calls fail
	}

	// A graph on two agent nodes, paused on t2, t3 running.
	flag, gate3, gate4 := filepath.Join(dir, "flag"), filepath.Join(dir, "gate3"), filepath.Join(dir, "gate4")
	c := api()
	rel, err := c.CreateRelease(ctx, model.ReleaseInput{ID: "rel-" + id, Name: "upgrade"})
	require.NoError(t, err)
	nodes := []model.Node{{ID: "a1", Roles: []string{"compute"}, Mode: model.NodeAgent}, {ID: "a2", Roles: []string{"storage"}, Mode: model.NodeAgent}}
	cl, err := c.CreateCluster(ctx, model.ClusterInput{ID: "cl-" + id, Name: "upgrade", ReleaseID: rel.ID, Nodes: nodes})
	require.NoError(t, err)
	_, err = c.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Format: "json", Data: []byte(graphTasks(flag, gate3, gate4))})
	require.NoError(t, err)
	var agents []*agent
	for _, n := range nodes {
		tok, err := c.IssueNodeToken(ctx, cl.ID, n.ID)
		require.NoError(t, err)
		a := &agent{node: n.ID, vars: map[string]string{
			"CAIRN_SERVER": servers[0].url, "CAIRN_NODE_TOKEN": tok.Token, "CAIRN_NODE_ROOT": filepath.Join(dir, "root-"+n.ID),
			"CAIRN_TEMPORAL_ADDRESS": temporal, "CAIRN_WORKER_DRAIN": "1s", "CAIRN_LOG_FORMAT": "json",
		}}
		a.start(t, dir, "old", oldBin)
		agents = append(agents, a)
	}
	graph, err := c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{OnFailure: model.OnFailurePause})
	require.NoError(t, err)
	waitStatus(ctx, t, api, graph.ID, model.ExecWaiting)
	require.Eventually(t, func() bool { return len(readLines(filepath.Join(dir, "root-a2", "order"))) == 1 }, 2*time.Minute, 50*time.Millisecond,
		"t1 did not run on a2")

	// An apply whose second command runs (and waits for the gate).
	target := filepath.Join(dir, "target")
	require.NoError(t, os.MkdirAll(target, 0o755))
	applyStack, err := c.CreateStack(ctx, model.StackInput{Name: "apply-" + id})
	require.NoError(t, err)
	apply, err := c.Apply(ctx, applyStack.ID, yamlDoc(applyPackage(target)), client.ApplyOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(readLines(filepath.Join(target, "lines"))) == 1 }, 2*time.Minute, 50*time.Millisecond,
		"the apply's first command did not run")

	// A plan waiting for approval, for as long as approvals wait.
	approvalDir := filepath.Join(dir, "approval")
	require.NoError(t, os.MkdirAll(approvalDir, 0o755))
	approvalStack, err := c.CreateStack(ctx, model.StackInput{Name: "approval-" + id})
	require.NoError(t, err)
	plan, err := c.Apply(ctx, approvalStack.ID, yamlDoc(fmt.Sprintf("kind: File\nmetadata: {name: a}\nspec: {path: %s/a, content: \"a\\n\"}\n", approvalDir)),
		client.ApplyOptions{ApproveRequired: true, ApprovalTimeout: 72 * time.Hour})
	require.NoError(t, err)
	waitStatus(ctx, t, api, plan.ID, model.ExecWaiting)

	// A drift schedule of an applied stack, which has fired on the old build.
	driftDir := filepath.Join(dir, "drift")
	require.NoError(t, os.MkdirAll(driftDir, 0o755))
	driftStack, err := c.CreateStack(ctx, model.StackInput{Name: "drift-" + id})
	require.NoError(t, err)
	applied, err := c.Apply(ctx, driftStack.ID, yamlDoc(fmt.Sprintf("kind: File\nmetadata: {name: d}\nspec: {path: %s/d, content: \"d\\n\"}\n", driftDir)),
		client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, applied.Status, applied.Error)
	_, err = c.SetDrift(ctx, driftStack.ID, model.DriftSettings{Every: "2s"})
	require.NoError(t, err)
	lastCheck(ctx, t, api, driftStack.ID, time.Time{})

	// The rolling upgrade: each server, then each agent, stopped and
	// replaced by one of this build.
	for _, s := range servers {
		s.proc.stop(t)
		s.start(t, dir, "new", newBin)
	}
	// Old agents and new servers: a2's old agent ends t3 and starts t4,
	// its step data going through the new servers' agent API.
	a2order := filepath.Join(dir, "root-a2", "order")
	require.NoError(t, os.WriteFile(gate3, nil, 0o644))
	require.Eventually(t, func() bool { return len(readLines(a2order)) == 2 }, time.Minute, 50*time.Millisecond,
		"t3 did not end on a2's old agent under the new servers")
	require.Eventually(t, func() bool { return len(readLines(filepath.Join(dir, "root-a2", "t4.started"))) == 1 }, time.Minute, 50*time.Millisecond,
		"t4 did not start on a2's old agent")
	for _, a := range agents {
		a.proc.stop(t)
		a.start(t, dir, "new", newBin)
	}
	upgraded := time.Now()
	t.Logf("servers and agents upgraded")

	// Nothing finished meanwhile, nor failed.
	c = api()
	for _, id := range []string{apply.ID, graph.ID, plan.ID} {
		e, err := c.GetExecution(ctx, id)
		require.NoError(t, err)
		require.False(t, e.Finished(), "execution %s ended during the upgrade: %s %s", id, e.Status, e.Error)
	}

	// The apply goes on where it was, on the new servers.
	require.NoError(t, os.WriteFile(filepath.Join(target, "gate"), nil, 0o644))
	// From a build that keeps start markers, e2, cut off by its server's
	// stop, waits unknown: retried, as an operator would.
	require.Eventually(t, func() bool {
		for _, step := range unknownSteps(ctx, c, apply.ID) {
			_, _ = c.Decide(ctx, apply.ID, model.DecisionRequest{Action: model.DecisionRetry, Step: step})
		}
		e, err := c.GetExecution(ctx, apply.ID)
		return err == nil && e.Finished()
	}, 2*time.Minute, 100*time.Millisecond, "the apply did not finish")
	done := waitFinished(ctx, t, c, apply.ID)
	require.Equal(t, model.ExecCompleted, done.Status, done.Error)
	lines := readLines(filepath.Join(target, "lines"))
	require.Len(t, lines, 3, "each command once: %q", lines)
	assert.Regexp(t, `^e1 srv-\d-old$`, lines[0])
	assert.Regexp(t, `^e2 srv-\d-new$`, lines[1], "the waiting command finished on a new server")
	assert.Regexp(t, `^e3 srv-\d-new$`, lines[2])

	// The step that ran through the upgrade ends on the new agent (it
	// was handed back to its node's queue when the old agent stopped),
	// and the paused step, its cause fixed, is retried on the new agent.
	require.NoError(t, os.WriteFile(gate4, nil, 0o644))
	// From a build that keeps start markers, t4, cut off by its agent's
	// stop, waits unknown beside t2 instead: the retry of both runs it.
	require.Eventually(t, func() bool { return len(unknownSteps(ctx, c, graph.ID)) > 0 || len(readLines(a2order)) == 3 }, time.Minute, 50*time.Millisecond,
		"t4, handed back to node a2's queue when its old agent stopped, did not end on the new agent: does the new build poll another queue name for the node (workflows.NodeTaskQueue)?")
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	_, err = c.Decide(ctx, graph.ID, model.DecisionRequest{Action: model.DecisionRetry, All: true})
	require.NoError(t, err)
	done = waitFinished(ctx, t, c, graph.ID)
	require.Equal(t, model.ExecCompleted, done.Status, done.Error)
	assert.Equal(t, []string{"t1 a1-old", "t2 a1-new"}, readLines(filepath.Join(dir, "root-a1", "order")))
	assert.Equal(t, []string{"t1 a2-old", "t3 a2-old", "t4 a2-new"}, readLines(a2order))

	// The plan, approved, is applied.
	_, err = c.Approve(ctx, plan.ID, "after the upgrade")
	require.NoError(t, err)
	done = waitFinished(ctx, t, c, plan.ID)
	require.Equal(t, model.ExecCompleted, done.Status, done.Error)
	_, err = os.Stat(filepath.Join(approvalDir, "a"))
	require.NoError(t, err, "the approved plan was not applied")

	// The schedule fires checks on the new build.
	check := lastCheck(ctx, t, api, driftStack.ID, upgraded)
	assert.False(t, check.Drifted, "%+v", check)
	require.NoError(t, c.DeleteDrift(ctx, driftStack.ID))
}

// unknownSteps lists the steps of execution id that wait for a decision
// with their outcome unknown: a command a stop cut off, on a build that
// keeps start markers (docs/executions.md).
func unknownSteps(ctx context.Context, c *client.Client, id string) []string {
	e, err := c.GetExecution(ctx, id)
	if err != nil || e.Status != model.ExecWaiting {
		return nil
	}
	var out []string
	for _, s := range e.Steps {
		if s.Status == model.StatusUnknown {
			out = append(out, s.ID)
		}
	}
	return out
}

func waitStatus(ctx context.Context, t *testing.T, api func() *client.Client, id string, want model.ExecutionStatus) {
	t.Helper()
	var last *model.Execution
	require.Eventually(t, func() bool {
		e, err := api().GetExecution(ctx, id)
		if err == nil {
			last = e
		}
		return err == nil && e.Status == want
	}, 2*time.Minute, 100*time.Millisecond, "execution %s is not %s: %+v", id, want, last)
}

func waitFinished(ctx context.Context, t *testing.T, c *client.Client, id string) *model.Execution {
	t.Helper()
	e, err := c.Wait(ctx, id, 100*time.Millisecond)
	require.NoError(t, err)
	return e
}

// lastCheck waits for a drift check of the stack recorded after since,
// and requires that it could tell.
func lastCheck(ctx context.Context, t *testing.T, api func() *client.Client, stackID string, since time.Time) *model.DriftCheck {
	t.Helper()
	var check *model.DriftCheck
	require.Eventually(t, func() bool {
		d, err := api().GetDrift(ctx, stackID)
		if err == nil && d.LastCheck != nil && d.LastCheck.CheckedAt.After(since) {
			check = d.LastCheck
		}
		return check != nil
	}, 2*time.Minute, 100*time.Millisecond, "no drift check of stack %s after %s", stackID, since)
	require.Empty(t, check.Error, "%+v", check)
	return check
}
