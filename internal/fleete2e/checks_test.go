package fleete2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

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
