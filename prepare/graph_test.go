package prepare

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// graphFixture is a release with graphs of types deploy and check, a
// cluster layer over deploy, and a cluster of three nodes.
func graphFixture(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	put := func(layer model.Layer, owner, typ string, tasks ...*model.Task) {
		require.NoError(t, st.PutGraph(ctx, &model.StoredGraph{Layer: layer, OwnerID: owner, Type: typ, Graph: &model.Graph{Type: typ, Tasks: tasks}}))
	}
	require.NoError(t, st.PutRelease(ctx, &model.Release{ID: "rel", Name: "rel"}))
	require.NoError(t, st.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", ReleaseID: "rel", Nodes: []model.Node{
		{ID: "n1", Name: "node-1", Roles: []string{"controller"}},
		{ID: "n2", Name: "node-2", Roles: []string{"compute"}},
		{ID: "n3", Name: "node-3", Roles: []string{"compute"}},
	}}))
	put(model.LayerRelease, "rel", "deploy",
		&model.Task{ID: "a", Type: "shell", Roles: []string{"*"}, Parameters: map[string]any{"cmd": "a v1"}},
		&model.Task{ID: "b", Type: "shell", Roles: []string{"compute"}, Requires: []string{"a"}, Parameters: map[string]any{"cmd": "b"}})
	put(model.LayerCluster, "c1", "deploy", &model.Task{ID: "a", Parameters: map[string]any{"cmd": "a v2"}})
	put(model.LayerRelease, "rel", "check", &model.Task{ID: "probe", Type: "shell", Roles: []string{"compute"}, Parameters: map[string]any{"cmd": "probe"}})
	return st
}

func TestCheckRefusesBadRequests(t *testing.T) {
	st := graphFixture(t)
	p := NewPreparer(st, nil, Files{})
	tests := []struct {
		name string
		req  contract.GraphRequest
		path string
		want string
	}{
		{"no graph of the type", contract.GraphRequest{Types: []string{"upgrade"}}, "types[0]", `no graph of type "upgrade" in cluster "c1", its release or its plugins`},
		{"unknown node", contract.GraphRequest{Nodes: []string{"n9"}}, "nodes[0]", `cluster "c1" has no node "n9"`},
		{"unknown task", contract.GraphRequest{Tasks: []string{"zz"}}, "tasks[0]", `no task "zz" in the graphs of type [deploy]`},
		{"unknown task across types", contract.GraphRequest{Types: []string{"deploy", "check"}, Tasks: []string{"a", "zz"}}, "tasks[1]", `no task "zz" in the graphs of type [deploy check]`},
		{"type twice", contract.GraphRequest{Types: []string{"deploy", "deploy"}}, "types[1]", `graph type "deploy" is listed twice`},
		{"type and types", contract.GraphRequest{Type: "deploy", Types: []string{"check"}}, "types", "give type or types, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.ClusterID = "c1"
			if tt.req.Types == nil && tt.req.Type == "" {
				tt.req.Types = []string{"deploy"}
			}
			_, err := p.Check(context.Background(), tt.req)
			require.ErrorIs(t, err, ErrInvalidGraph)
			var pr *Problems
			require.ErrorAs(t, err, &pr)
			require.NotEmpty(t, pr.Details)
			assert.Contains(t, pr.Details, model.ErrorDetail{Document: requestDocument, Path: tt.path, Message: tt.want}, "details %+v", pr.Details)
		})
	}
	_, err := p.Check(context.Background(), contract.GraphRequest{ClusterID: "nope"})
	require.ErrorIs(t, err, store.ErrNotFound, "an unknown cluster")
}

// A pinned request is prepared from its expansion: the execution, and a
// retry of it, neither merge nor expand; a changed cluster layer does not
// reach them.
func TestPrepareRunsThePinnedExpansion(t *testing.T) {
	ctx := context.Background()
	st := graphFixture(t)
	p := NewPreparer(st, nil, Files{})
	checked, err := p.Check(ctx, contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy", "check"}})
	require.NoError(t, err)
	req, err := p.Pin(ctx, checked)
	require.NoError(t, err)
	assert.Equal(t, int64(2), p.Merges(), "one merge per type")
	assert.Equal(t, int64(2), p.Expansions(), "one expansion per type")
	require.Len(t, req.Snapshots, 2)
	require.NotEmpty(t, req.Expansion)
	snap, err := st.GetSnapshot(ctx, req.Expansion)
	require.NoError(t, err)
	assert.Equal(t, ExpansionSnapshotKind, snap.Kind)

	// The cluster's layer changes after the request was pinned.
	require.NoError(t, st.PutGraph(ctx, &model.StoredGraph{Layer: model.LayerCluster, OwnerID: "c1", Type: "deploy",
		Graph: &model.Graph{Type: "deploy", Tasks: []*model.Task{{ID: "a", Parameters: map[string]any{"cmd": "a v3"}}}}}))
	for _, retryOf := range [][]string{nil, {"first"}} {
		req.RetryOf = retryOf
		plan, err := p.Prepare(ctx, "e1", req, 0)
		require.NoError(t, err)
		assert.Equal(t, int64(2), p.Merges(), "preparing merged again")
		assert.Equal(t, int64(2), p.Expansions(), "preparing expanded again")
		assert.Equal(t, req.Snapshots, plan.Result.Snapshots)
		steps := map[string]*model.Step{}
		for _, m := range plan.Members {
			for _, s := range m {
				steps[s.ID] = &s.Step
			}
		}
		require.Contains(t, steps, "deploy/a@n2")
		assert.Equal(t, "a v2", steps["deploy/a@n2"].Spec["command"], "the pinned parameters run")
		assert.Contains(t, steps["check/probe@n2"].Deps, "deploy@master", "check waits for deploy's barrier")
		assert.Equal(t, "barrier", plan.Records["deploy@master"].TaskType)
	}

	_, err = p.Prepare(ctx, "e2", contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy"}}, 0)
	require.ErrorIs(t, err, ErrInvalidGraph, "an unpinned request")
	req.Types = []string{"deploy"}
	_, err = p.Prepare(ctx, "e3", req, 0)
	require.ErrorIs(t, err, ErrInvalidGraph, "an expansion of other types")
}

// A request's expansion is a claim: it runs only for the cluster, nodes
// and tasks it was expanded for, and only on nodes the cluster still has.
func TestPrepareRefusesAnExpansionMadeForAnotherRequest(t *testing.T) {
	ctx := context.Background()
	st := graphFixture(t)
	p := NewPreparer(st, nil, Files{})
	checked, err := p.Check(ctx, contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy"}})
	require.NoError(t, err)
	req, err := p.Pin(ctx, checked)
	require.NoError(t, err)
	_, err = p.Prepare(ctx, "e0", req, 0)
	require.NoError(t, err, "the request it was made for")

	// Another cluster whose nodes have the same ids.
	c1, err := st.GetCluster(ctx, "c1")
	require.NoError(t, err)
	c2 := *c1
	c2.ID, c2.Name = "c2", "c2"
	require.NoError(t, st.PutCluster(ctx, &c2))
	other := req
	other.ClusterID = "c2"
	_, err = p.Prepare(ctx, "e1", other, 0)
	require.ErrorIs(t, err, ErrInvalidGraph)
	assert.ErrorContains(t, err, `was made for cluster "c1"`)

	narrower := req
	narrower.Nodes = []string{"n2"}
	_, err = p.Prepare(ctx, "e2", narrower, 0)
	require.ErrorIs(t, err, ErrInvalidGraph, "a node subset the expansion was not made for")

	// Node n3 leaves the cluster: a retry cannot run its steps there.
	c1.Nodes = c1.Nodes[:2]
	require.NoError(t, st.PutCluster(ctx, c1))
	req.RetryOf = []string{"e0"}
	_, err = p.Prepare(ctx, "e3", req, 0)
	require.ErrorIs(t, err, ErrInvalidGraph)
	assert.ErrorContains(t, err, `is on node "n3", which cluster "c1" no longer has`)
}

// cancelAfterRelease is a store whose GetRelease, the last store read
// before a preparation without Fuel expressions plans its steps, ends the
// preparation's context.
type cancelAfterRelease struct {
	store.Store
	cancel context.CancelCauseFunc
}

func (s cancelAfterRelease) GetRelease(ctx context.Context, id string) (*model.Release, error) {
	rel, err := s.Store.GetRelease(ctx, id)
	s.cancel(errAttemptFenced)
	return rel, err
}

var errAttemptFenced = errors.New("attempt fenced off")

// A preparation whose context ends while it plans the steps (Temporal gave
// the attempt up) stops with the context's cause instead of running on.
func TestPrepareStopsWhenItsContextEnds(t *testing.T) {
	st := graphFixture(t)
	checked, err := NewPreparer(st, nil, Files{}).Check(context.Background(), contract.GraphRequest{ClusterID: "c1", Types: []string{"deploy"}})
	require.NoError(t, err)
	req, err := NewPreparer(st, nil, Files{}).Pin(context.Background(), checked)
	require.NoError(t, err)

	plan, err := NewPreparer(st, nil, Files{}).Prepare(context.Background(), "e1", req, 0)
	require.NoError(t, err, "prepared when nothing ends it")
	require.NotEmpty(t, plan.Units)

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	_, err = NewPreparer(cancelAfterRelease{Store: st, cancel: cancel}, nil, Files{}).Prepare(ctx, "e2", req, 0)
	require.ErrorIs(t, err, errAttemptFenced)
}
