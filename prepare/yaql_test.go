package prepare

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/yaql"
)

// A step's Fuel expressions are evaluated on its node against the data of
// the task's last successful run there, which each execution keeps.
func TestResolveStepFuelExpressions(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cluster := &model.Cluster{ID: "env", Name: "env", Nodes: []model.Node{
		{ID: "n1", Name: "node-1", Roles: []string{"controller"}},
		{ID: "n2", Name: "node-2", Roles: []string{"compute"}},
	}}
	require.NoError(t, st.PutCluster(ctx, cluster))
	settings := func(x int, debug bool) {
		cluster.Settings = map[string]any{"x": x, "common": map[string]any{"debug": map[string]any{"value": debug}}}
	}
	env := func(execID string, force bool) *yaqlEnv {
		hist := newNodeHistory(st, "env", force)
		y, err := newYAQLEnv(ctx, st, cluster, execID, true, hist)
		require.NoError(t, err)
		return y
	}
	task := &model.Task{ID: "cfg", Type: "shell", Strategy: &model.Strategy{Type: "parallel",
		AmountYAQL: "switch('controller' in $.roles => 1, true => 3)"}}
	step := func(node string) *model.Step {
		return &model.Step{ID: "cfg@" + node, Task: "cfg", Node: node,
			Condition: yaql.Tagged("changed($.x)"),
			Spec:      map[string]any{"command": map[string]any{"yaql_exp": "concat('echo ', $.name)"}, "timeout": 60}}
	}

	// First run: no previous data, so changed.
	settings(1, false)
	y := env("e1", false)
	for _, n := range []string{"n1", "n2"} {
		s := step(n)
		require.NoError(t, y.resolveStep(ctx, s, task, n, false))
		assert.Equal(t, "", s.Condition, "%s: true leaves no condition", n)
		assert.Equal(t, "echo node-"+n[1:], s.Spec["command"])
		assert.Equal(t, 60, s.Spec["timeout"])
		want := 3
		if n == "n1" {
			want = 1
		}
		assert.Equal(t, want, s.Strategy, n)
		require.NoError(t, st.RecordTaskRun(ctx, model.TaskRun{ClusterID: "env", NodeID: n, TaskID: "cfg", ExecutionID: "e1"}))
	}

	tests := []struct {
		name  string
		x     int
		force bool
		want  string
	}{
		{"same settings: skipped", 1, false, "false"},
		{"forced: as if it never ran", 1, true, ""},
		{"the setting changed", 2, false, ""},
	}
	for i, tt := range tests {
		settings(tt.x, false)
		y := env("e"+string(rune('2'+i)), tt.force)
		s := step("n2")
		require.NoError(t, y.resolveStep(ctx, s, task, "n2", false), tt.name)
		assert.Equal(t, tt.want, s.Condition, tt.name)
	}

	// Legacy conditions read the settings as stored.
	settings(1, true)
	y = env("e9", false)
	s := &model.Step{ID: "dbg@n1", Task: "dbg", Node: "n1", Condition: "settings:common.debug.value == true"}
	require.NoError(t, y.resolveStep(ctx, s, nil, "n1", false))
	assert.Equal(t, "", s.Condition)
	s.Condition = "settings:common.debug.value == false"
	require.NoError(t, y.resolveStep(ctx, s, nil, "n1", false))
	assert.Equal(t, "false", s.Condition)

	// Structural steps only drop a Fuel condition; Cairn's own stay.
	s = &model.Step{ID: "g@n1", Task: "g", Condition: yaql.Tagged("nosuch(")}
	require.NoError(t, y.resolveStep(ctx, s, nil, "n1", true))
	assert.Equal(t, "", s.Condition)
	s = &model.Step{ID: "own@n1", Task: "own", Condition: `changed "cfg"`}
	require.NoError(t, y.resolveStep(ctx, s, nil, "n1", false))
	assert.Equal(t, `changed "cfg"`, s.Condition)

	// Bad expressions and amounts are configuration errors.
	bad := []struct {
		name string
		step *model.Step
		task *model.Task
		msg  string
	}{
		{"run-time error", &model.Step{Task: "b", Condition: yaql.Tagged("$.nothing.deeper")}, nil, "condition: line 1, column 2: no key \"nothing\" (read an optional key with get('nothing'))"},
		{"amount not a count", &model.Step{Task: "b"}, &model.Task{Strategy: &model.Strategy{AmountYAQL: "'three'"}}, "strategy amount: expected a positive whole number, got three"},
		{"value", &model.Step{Task: "b", Spec: map[string]any{"l": []any{map[string]any{"yaql_exp": "len(1)"}}}}, nil, "spec.l[0]: line 1, column 1: len: expected a string, a list or a dict, got a number"},
	}
	for _, tt := range bad {
		err := y.resolveStep(ctx, tt.step, tt.task, "n1", false)
		require.Error(t, err, tt.name)
		assert.True(t, isYAQLError(err), "%s: %v", tt.name, err)
		assert.EqualError(t, err, tt.msg, tt.name)
	}

	// Each node's own part was kept per execution, and the part every
	// node shares once: a node's row does not list the other nodes.
	own, err := st.GetDeploymentData(ctx, "env", "n2", "e1")
	require.NoError(t, err)
	assert.Contains(t, string(own), "node-2")
	assert.NotContains(t, string(own), "node-1")
	common, err := st.GetDeploymentData(ctx, "env", "", "e1")
	require.NoError(t, err)
	assert.Contains(t, string(common), "node-1")
	// Pruning keeps what runs refer to.
	n, err := st.PruneDeploymentData(ctx, "env", "e9")
	require.NoError(t, err)
	assert.Equal(t, 6, n, "e2, e3 and e4 (each a node's part and the common part) are referred to by no run")

	// An execution that kept each node's data whole (before the common
	// part was kept apart) reads as it was.
	require.NoError(t, st.PutDeploymentData(ctx, "env", "n2", "old", []byte(`{"x":1,"name":"node-2"}`)))
	require.NoError(t, st.RecordTaskRun(ctx, model.TaskRun{ClusterID: "env", NodeID: "n2", TaskID: "cfg", ExecutionID: "old"}))
	for _, tt := range []struct {
		x    int
		want string
	}{{1, "false"}, {2, ""}} {
		settings(tt.x, false)
		s := step("n2")
		require.NoError(t, env("after-old", false).resolveStep(ctx, s, task, "n2", false))
		assert.Equal(t, tt.want, s.Condition, "x = %d against the whole row", tt.x)
	}
}
