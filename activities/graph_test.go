package activities

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/stepdata"
	"github.com/cairn-io/cairn/store"
)

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

func graphActivities(st store.Store) *GraphActivities {
	return NewGraphActivities(New(Deps{Store: st}), prepare.NewPreparer(st, nil, prepare.Files{}))
}

// prepared checks and pins req on c1 (type deploy unless it names types)
// as the API does and prepares its execution execID, returning the
// activity's answer and the steps it kept.
func prepared(t *testing.T, st store.Store, execID string, req contract.GraphRequest) (*contract.PreparedGraph, map[string]*planner.StoredStep) {
	t.Helper()
	ctx := context.Background()
	if req.Types == nil {
		req.Types = []string{"deploy"}
	}
	req.ClusterID = "c1"
	p := prepare.NewPreparer(st, nil, prepare.Files{})
	checked, err := p.Check(ctx, req)
	require.NoError(t, err)
	pinned, err := p.Pin(ctx, checked)
	require.NoError(t, err)
	out, err := graphActivities(st).PrepareGraph(ctx, contract.PrepareGraphInput{ExecutionID: execID, Request: pinned})
	require.NoError(t, err)
	all, err := AllSteps(ctx, st, execID)
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
	out, steps := prepared(t, st, "e1", contract.GraphRequest{})
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
	g := graphActivities(st)
	_, steps := prepared(t, st, "e1", contract.GraphRequest{})
	c := steps["restart@n2"].Condition
	require.Equal(t, "{{true}}", c, "never ran: condition %q, want true", c)
	// Record config's run on n2 with the current parameters, as a
	// finished execution does.
	raw, _ := json.Marshal(stepdata.Outputs{Action: model.ActionRun, Outcome: model.OutcomeUpdated})
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
			_, steps := prepared(t, st, "e"+string(rune('2'+i)), contract.GraphRequest{Force: tt.force})
			c := steps["restart@"+tt.node].Condition
			require.Equal(t, tt.want, c, "condition")
		})
	}

	// New parameters make it changed again.
	putGraph(t, st, model.LayerCluster, "c1", &model.Task{ID: "config", Parameters: map[string]any{"cmd": "write config v2"}})
	_, steps = prepared(t, st, "e9", contract.GraphRequest{})
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
	g := graphActivities(st)
	prepared(t, st, "first", contract.GraphRequest{})
	// The first execution did a on both nodes, b on n2 only.
	for _, id := range []string{"a@n2", "a@n3", "b@n2"} {
		raw, _ := json.Marshal(stepdata.Outputs{Action: model.ActionRun, Outcome: model.OutcomeUpdated})
		require.NoError(t, st.PutStepData(ctx, "first", id, contract.DataOutputs, raw))
	}
	_, err := g.RecordGraphRuns(ctx, contract.RecordGraphRunsInput{ExecutionID: "first", ClusterID: "c1"})
	require.NoError(t, err)
	tests := []struct {
		name     string
		execID   string
		req      contract.GraphRequest
		wantDone []string
	}{
		{"retry", "retry-1", contract.GraphRequest{RetryOf: []string{"first"}}, []string{"a@n2", "a@n3", "b@n2"}},
		{"retry of a retry", "retry-2", contract.GraphRequest{RetryOf: []string{"retry-1", "first"}}, []string{"a@n2", "a@n3", "b@n2"}},
		{"forced retry runs everything", "retry-3", contract.GraphRequest{RetryOf: []string{"first"}, Force: true}, nil},
		{"not a retry", "again", contract.GraphRequest{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, steps := prepared(t, st, tt.execID, tt.req)
			require.Equal(t, len(tt.wantDone), out.Done, "done")
			for _, id := range tt.wantDone {
				assert.Equal(t, model.TaskStage, steps[id].Base, "%s runs as %s, want a noop", id, steps[id].Base)
			}
			assert.Equal(t, "exec", steps["b@n3"].Base, "b@n3, which never ran, runs as")
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
	_, steps := prepared(t, st, "e1", contract.GraphRequest{Types: []string{"deploy", "check"}, Tasks: []string{"a"}})
	s := steps["deploy/a@n2"]
	require.NotNil(t, s, "deploy/a@n2 = %+v, want it to run", s)
	require.False(t, s.Skipped, "deploy/a@n2 = %+v, want it to run", s)
	s = steps["check/b@n2"]
	require.NotNil(t, s, "check/b@n2 = %+v, want it skipped, after type deploy", s)
	require.True(t, s.Skipped, "check/b@n2 = %+v, want it skipped, after type deploy", s)
	require.True(t, contains(s.Deps, "deploy@master"), "check/b@n2 = %+v, want it skipped, after type deploy", s)
}

// An execution's preparation, and its dry-run, evaluate yaql cross
// dependencies on each node and keep the edges in the stored steps; the
// execution keeps the nodes' deployment data for the next one.
func TestPrepareGraphCrossDependsYAQL(t *testing.T) {
	st := graphStore(t)
	putGraph(t, st, model.LayerRelease, "rel",
		&model.Task{ID: "api", Type: "shell", Roles: []string{"controller"}, Parameters: map[string]any{"cmd": "api"}},
		&model.Task{ID: "agent", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "agent"},
			CrossDependsYAQL: "[{name => 'api', role => 'controller'}]"},
	)
	for _, dry := range []bool{true, false} {
		exec := "e-run"
		if dry {
			exec = "e-dry"
		}
		_, steps := prepared(t, st, exec, contract.GraphRequest{DryRun: dry})
		for _, n := range []string{"n2", "n3"} {
			assert.Equal(t, []string{"api@n1"}, steps["agent@"+n].Deps, "dry-run %v, node %s", dry, n)
		}
		_, err := st.GetDeploymentData(context.Background(), "c1", "n2", exec)
		if dry {
			assert.ErrorIs(t, err, store.ErrNotFound, "a dry-run keeps no data")
		} else {
			assert.NoError(t, err, "the execution keeps n2's data")
		}
	}
}
