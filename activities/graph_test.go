package activities

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/store"
)

func TestSpecializeCondition(t *testing.T) {
	history := func(fn, task string) (any, error) {
		switch {
		case task == "ghost":
			return nil, errors.New(`no task "ghost" in the graph`)
		case fn == "changed":
			return task == "" || task == "config", nil
		case task == "":
			return "2026-03-01T11:00:00Z", nil
		}
		return "", nil
	}
	tests := []struct {
		name    string
		cond    string
		want    bool   // the specialized condition evaluated
		wantErr string // from specializing
	}{
		{"bare changed of the own task", `changed`, true, ""},
		{"changed of another task", `changed "config"`, true, ""},
		{"unchanged task", `changed "other"`, false, ""},
		{"negated", `not (changed "other")`, true, ""},
		{"combined with the node", `and (changed "config") (eq .node.name "n1")`, true, ""},
		{"bare identifier argument", `and changed (eq .node.name "n2")`, false, ""},
		{"template form", `{{ if changed "other" }}true{{ else }}false{{ end }}`, false, ""},
		{"lastRun of the own task", `eq lastRun "2026-03-01T11:00:00Z"`, true, ""},
		{"never ran", `eq (lastRun "other") ""`, true, ""},
		{"unknown task", `changed "ghost"`, false, `no task "ghost"`},
		{"piped", `"config" | changed`, false, "cannot take a piped value"},
		{"not a string", `changed .node.name`, false, "takes a task id in quotes"},
		{"too many arguments", `changed "a" "b"`, false, "at most one task id"},
		{"bad syntax", `changed (`, false, "condition:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := specializeCondition(tt.cond, history)
			if tt.wantErr != "" {
				require.Error(t, err, "err = %v, want %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "err = %v, want %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if usesHistory(got) {
				require.NotContains(t, got, "changed ", "specialized condition %q still calls a history function", got)
			}
			ok, err := expr.Condition(got, expr.Context{Node: map[string]any{"name": "n1"}})
			require.NoError(t, err, "specialized condition %q: %v", got, err)
			require.Equal(t, tt.want, ok, "%q specialized to %q = %v, want %v", tt.cond, got, ok, tt.want)
		})
	}
}

func TestFaultTolerance(t *testing.T) {
	tests := []struct {
		spec    string
		nodes   int
		want    int
		wantErr bool
	}{
		{"2", 5, 2, false},
		{"0", 5, 0, false},
		{"9", 5, 5, false},
		{"-1", 5, 4, false},
		{"-7", 5, 0, false},
		{"30%", 10, 3, false},
		{"34%", 3, 1, false},
		{"100%", 4, 4, false},
		{" 50 % ", 3, 1, false},
		{"150%", 3, 0, true},
		{"some", 3, 0, true},
	}
	for _, tt := range tests {
		got, err := FaultTolerance(tt.spec, tt.nodes)
		require.Equal(t, tt.wantErr, err != nil, "FaultTolerance(%q, %d) = %d, %v; want %d (error %v)", tt.spec, tt.nodes, got, err, tt.want, tt.wantErr)
		assert.Equal(t, tt.want, got, "FaultTolerance(%q, %d) = %d, %v; want %d (error %v)", tt.spec, tt.nodes, got, err, tt.want, tt.wantErr)
	}
}

// graphStore is a release, a plugin and a cluster of three nodes.
func graphStore(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	for _, err := range []error{
		st.PutRelease(ctx, &model.Release{ID: "rel", Name: "rel"}),
		st.PutPlugin(ctx, &model.Plugin{ID: "plug", Name: "plug"}),
		st.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", ReleaseID: "rel", PluginIDs: []string{"plug"}, Nodes: []model.Node{
			{ID: "n1", Name: "node-1", Roles: []string{"controller"}},
			{ID: "n2", Name: "node-2", Roles: []string{"compute"}},
			{ID: "n3", Name: "node-3", Roles: []string{"compute"}},
		}}),
	} {
		require.NoError(t, err)
	}
	return st
}

func putGraph(t *testing.T, st store.Store, layer model.Layer, owner string, tasks ...*model.Task) {
	t.Helper()
	err := st.PutGraph(context.Background(), &model.StoredGraph{Layer: layer, OwnerID: owner, Type: "deploy",
		Graph: &model.Graph{Type: "deploy", Tasks: tasks}})
	require.NoError(t, err)
}

func prepared(t *testing.T, st store.Store, in contract.PrepareGraphInput) (*contract.PreparedGraph, map[string]*planner.StoredStep) {
	t.Helper()
	g := NewGraphActivities(New(Deps{Store: st}), nil)
	if in.Types == nil {
		in.Types = []string{"deploy"}
	}
	in.ClusterID = "c1"
	out, err := g.PrepareGraph(context.Background(), in)
	require.NoError(t, err)
	all, err := AllSteps(context.Background(), st, in.ExecutionID)
	require.NoError(t, err)
	byID := map[string]*planner.StoredStep{}
	for _, s := range all {
		byID[s.ID] = s
	}
	return out, byID
}

func TestPrepareGraphMergesLayers(t *testing.T) {
	st := graphStore(t)
	f := false
	putGraph(t, st, model.LayerRelease, "rel",
		&model.Task{ID: "install", Type: "shell", Roles: []string{"*"}, Parameters: map[string]any{"cmd": "install v1", "timeout": int64(60)}},
		&model.Task{ID: "restart", Type: "shell", Roles: []string{"compute"}, Requires: []string{"install"}, Parameters: map[string]any{"cmd": "restart"}},
	)
	// The cluster changes one parameter and fail_on_error; the plugin
	// disables restart but keeps its edges, and adds a task.
	putGraph(t, st, model.LayerCluster, "c1",
		&model.Task{ID: "install", Parameters: map[string]any{"cmd": "install v2"}, FailOnError: &f},
	)
	putGraph(t, st, model.LayerPlugin, "plug",
		&model.Task{ID: "restart", Type: model.TaskSkipped},
		&model.Task{ID: "verify", Type: "shell", Roles: []string{"compute"}, Requires: []string{"restart"}, Parameters: map[string]any{"cmd": "verify"}},
	)
	out, steps := prepared(t, st, contract.PrepareGraphInput{ExecutionID: "e1"})
	install := steps["install@n2"]
	require.NotNil(t, install, "install@n2 = %+v, want the cluster's command over the release's timeout, fail_on_error false", install)
	require.Equal(t, "install v2", install.Spec["command"], "install@n2 = %+v, want the cluster's command over the release's timeout, fail_on_error false", install)
	require.NotNil(t, install.Spec["timeout"], "install@n2 = %+v, want the cluster's command over the release's timeout, fail_on_error false", install)
	require.False(t, install.FailsOnError(), "install@n2 = %+v, want the cluster's command over the release's timeout, fail_on_error false", install)
	restart := steps["restart@n2"]
	require.NotNil(t, restart, "restart@n2 = %+v, want skipped with its edge to install", restart)
	require.True(t, restart.Skipped, "restart@n2 = %+v, want skipped with its edge to install", restart)
	require.True(t, contains(restart.Deps, "install@n2"), "restart@n2 = %+v, want skipped with its edge to install", restart)
	v := steps["verify@n3"]
	require.NotNil(t, v, "verify@n3 = %+v, want it to wait for the skipped restart", v)
	require.True(t, contains(v.Deps, "restart@n3"), "verify@n3 = %+v, want it to wait for the skipped restart", v)
	require.Len(t, out.Snapshots, 1, "snapshots")
	snap, err := st.GetSnapshot(context.Background(), out.Snapshots[0])
	require.NoError(t, err, "merged snapshot = %s, %v", snap.Content, err)
	require.Contains(t, string(snap.Content), "install v2", "merged snapshot = %s, %v", snap.Content, err)
}

func TestPrepareGraphHistory(t *testing.T) {
	ctx := context.Background()
	st := graphStore(t)
	putGraph(t, st, model.LayerRelease, "rel",
		&model.Task{ID: "config", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "write config"}},
		&model.Task{ID: "restart", Type: "shell", Roles: []string{"compute"}, Requires: []string{"config"},
			Condition: `changed "config"`, Parameters: map[string]any{"cmd": "restart"}},
	)
	g := NewGraphActivities(New(Deps{Store: st}), nil)
	_, steps := prepared(t, st, contract.PrepareGraphInput{ExecutionID: "e1"})
	c := steps["restart@n2"].Condition
	require.Equal(t, "{{true}}", c, "never ran: condition %q, want true", c)
	// Record config's run on n2 with the current parameters, as a
	// finished execution does.
	raw, _ := json.Marshal(outputsRecord{Action: model.ActionRun, Outcome: model.OutcomeUpdated})
	require.NoError(t, st.PutStepData(ctx, "e1", "config@n2", contract.DataOutputs, raw))
	res, err := g.RecordGraphRuns(ctx, contract.RecordGraphRunsInput{ExecutionID: "e1", ClusterID: "c1"})
	require.NoError(t, err, "recorded %+v, %v; want config@n2 only (the others have no outputs)", res, err)
	require.Equal(t, 1, res.Recorded, "recorded %+v, %v; want config@n2 only (the others have no outputs)", res, err)
	run, err := st.LastTaskRun(ctx, "c1", "n2", "config")
	require.NoError(t, err, "history = %+v, %v", run, err)
	require.Equal(t, "e1", run.ExecutionID, "history = %+v, %v", run, err)
	require.NotEmpty(t, run.Digest, "history = %+v, %v", run, err)

	tests := []struct {
		name  string
		force bool
		node  string
		want  string
	}{
		{"unchanged since the last run", false, "n2", "{{false}}"},
		{"another node never ran it", false, "n3", "{{true}}"},
		{"force ignores history", true, "n2", "{{true}}"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, steps := prepared(t, st, contract.PrepareGraphInput{ExecutionID: "e" + string(rune('2'+i)), Force: tt.force})
			c := steps["restart@"+tt.node].Condition
			require.Equal(t, tt.want, c, "condition")
		})
	}

	// New parameters make it changed again.
	putGraph(t, st, model.LayerCluster, "c1", &model.Task{ID: "config", Parameters: map[string]any{"cmd": "write config v2"}})
	_, steps = prepared(t, st, contract.PrepareGraphInput{ExecutionID: "e9"})
	c = steps["restart@n2"].Condition
	require.Equal(t, "{{true}}", c, "after a parameter change: condition %q, want true", c)
}

func TestPrepareGraphRetryTurnsDoneStepsIntoNoops(t *testing.T) {
	ctx := context.Background()
	st := graphStore(t)
	putGraph(t, st, model.LayerRelease, "rel",
		&model.Task{ID: "a", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "a"}},
		&model.Task{ID: "b", Type: "shell", Roles: []string{"compute"}, Requires: []string{"a"}, Parameters: map[string]any{"cmd": "b"}},
	)
	g := NewGraphActivities(New(Deps{Store: st}), nil)
	prepared(t, st, contract.PrepareGraphInput{ExecutionID: "first"})
	// The first execution did a on both nodes, b on n2 only.
	for _, id := range []string{"a@n2", "a@n3", "b@n2"} {
		raw, _ := json.Marshal(outputsRecord{Action: model.ActionRun, Outcome: model.OutcomeUpdated})
		require.NoError(t, st.PutStepData(ctx, "first", id, contract.DataOutputs, raw))
	}
	_, err := g.RecordGraphRuns(ctx, contract.RecordGraphRunsInput{ExecutionID: "first", ClusterID: "c1"})
	require.NoError(t, err)
	tests := []struct {
		name     string
		in       contract.PrepareGraphInput
		wantDone []string
	}{
		{"retry", contract.PrepareGraphInput{ExecutionID: "retry-1", RetryOf: []string{"first"}}, []string{"a@n2", "a@n3", "b@n2"}},
		{"retry of a retry", contract.PrepareGraphInput{ExecutionID: "retry-2", RetryOf: []string{"retry-1", "first"}}, []string{"a@n2", "a@n3", "b@n2"}},
		{"forced retry runs everything", contract.PrepareGraphInput{ExecutionID: "retry-3", RetryOf: []string{"first"}, Force: true}, nil},
		{"not a retry", contract.PrepareGraphInput{ExecutionID: "again"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, steps := prepared(t, st, tt.in)
			require.Equal(t, len(tt.wantDone), out.Done, "done")
			for _, id := range tt.wantDone {
				assert.Equal(t, model.TaskStage, steps[id].Base, "%s runs as %s, want a noop", id, steps[id].Base)
			}
			assert.Equal(t, "exec", steps["b@n3"].Base, "b@n3, which never ran, runs as")
		})
	}
}

func TestPrepareGraphRejectsBadRequests(t *testing.T) {
	st := graphStore(t)
	putGraph(t, st, model.LayerRelease, "rel", &model.Task{ID: "a", Type: "shell", Roles: []string{"*"}, Parameters: map[string]any{"cmd": "a"}})
	tests := []struct {
		name string
		req  contract.GraphRequest
		want string
	}{
		{"unknown cluster", contract.GraphRequest{ClusterID: "nope", Types: []string{"deploy"}}, `cluster "nope" not found`},
		{"no graph of the type", contract.GraphRequest{ClusterID: "c1", Types: []string{"upgrade"}}, `no graph of type "upgrade"`},
		{"unknown node", contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy"}, Nodes: []string{"n9"}}, `unknown node "n9"`},
		{"unknown task", contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy"}, Tasks: []string{"zz"}}, `unknown task "zz"`},
		{"type twice", contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy", "deploy"}}, "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildGraph(context.Background(), st, nil, tt.req)
			require.ErrorIs(t, err, ErrGraphRequest, "err = %v, want %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "err = %v, want %q", err, tt.want)
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPrepareGraphTaskSubsetAcrossTypes(t *testing.T) {
	st := graphStore(t)
	putGraph(t, st, model.LayerRelease, "rel", &model.Task{ID: "a", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "a"}})
	err := st.PutGraph(context.Background(), &model.StoredGraph{Layer: model.LayerRelease, OwnerID: "rel", Type: "check",
		Graph: &model.Graph{Type: "check", Tasks: []*model.Task{{ID: "b", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "b"}}}}})
	require.NoError(t, err)
	_, steps := prepared(t, st, contract.PrepareGraphInput{ExecutionID: "e1", GraphRequest: contract.GraphRequest{Types: []string{"deploy", "check"}, Tasks: []string{"a"}}})
	s := steps["deploy/a@n2"]
	require.NotNil(t, s, "deploy/a@n2 = %+v, want it to run", s)
	require.False(t, s.Skipped, "deploy/a@n2 = %+v, want it to run", s)
	s = steps["check/b@n2"]
	require.NotNil(t, s, "check/b@n2 = %+v, want it skipped, after type deploy", s)
	require.True(t, s.Skipped, "check/b@n2 = %+v, want it skipped, after type deploy", s)
	require.True(t, contains(s.Deps, "deploy@master"), "check/b@n2 = %+v, want it skipped, after type deploy", s)
	_, err = BuildGraph(context.Background(), st, nil, contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy", "check"}, Tasks: []string{"a", "zz"}})
	require.ErrorIs(t, err, ErrGraphRequest, "err = %v, want the unknown task named", err)
	require.Contains(t, err.Error(), `unknown task "zz"`, "err = %v, want the unknown task named", err)
}
