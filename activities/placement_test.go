package activities_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// requireWrongNode checks err is the non-retryable refusal of a unit meant
// for another worker.
func requireWrongNode(t *testing.T, err error, contains string) {
	t.Helper()
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "error %v is not an application error", err)
	assert.Equal(t, contract.WrongNodeType, app.Type())
	assert.True(t, app.NonRetryable(), "a unit on the wrong worker is not retried there")
	assert.Contains(t, err.Error(), contains)
	assert.Contains(t, err.Error(), "nothing was run")
}

func TestStepsRunOnlyOnTheNodeTheyName(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	require.NoError(t, f.st.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
		{ID: "n1", Name: "n1", Roles: []string{"web"}, Mode: model.NodeAgent},
		{ID: "n2", Name: "n2", Roles: []string{"db"}, Mode: model.NodeAgent},
	}}))
	docs := `apiVersion: cairn/v1
kind: File
metadata: {name: web}
spec: {path: web.txt, content: "w"}
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: File
metadata: {name: db}
spec: {path: db.txt, content: "d"}
target: {roles: [db]}
---
apiVersion: cairn/v1
kind: File
metadata: {name: control}
spec: {path: ` + filepath.Join(f.root, "control.txt") + `, content: "c"}
`
	execID := "exec-placement"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, ClusterID: "c1",
		SnapshotHash: f.snapshot(docs), BatchSize: 1})
	units := map[string]contract.Unit{}
	for _, u := range plan.Units {
		units[u.Node] = u
	}
	require.Contains(t, units, "n1")
	require.Contains(t, units, "n2")
	require.Contains(t, units, "")

	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	root1 := t.TempDir()
	n1 := activities.New(activities.Deps{Steps: f.st, Registry: reg, Cluster: "c1", Node: providers.Node{Name: "n1", Root: root1}})

	// A unit of another node, of another cluster, or of the control plane
	// is refused before anything runs.
	_, err := n1.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: units["n2"]})
	requireWrongNode(t, err, `unit 1 for node "n2" of cluster "c1" reached the worker of node "n1" of cluster "c1"`)
	_, err = n1.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c2", Unit: units["n1"]})
	requireWrongNode(t, err, `for node "n1" of cluster "c2"`)
	_, err = n1.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: units[""]})
	requireWrongNode(t, err, `for node ""`)
	// The input's node is a claim: a unit that says n1 but whose step in
	// the store is n2's is refused too.
	lying := units["n2"]
	lying.Node = "n1"
	_, err = n1.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: lying})
	requireWrongNode(t, err, `step file/db@n2 for node "n2"`)
	_, err = n1.Compensate(ctx, contract.CompensateInput{ExecutionID: execID, Cluster: "c1", Unit: lying})
	requireWrongNode(t, err, `step file/db@n2 for node "n2"`)
	assert.NoFileExists(t, filepath.Join(root1, "db.txt"))

	// The control plane's worker refuses node units.
	_, err = f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: units["n1"]})
	requireWrongNode(t, err, `reached the worker of the control plane`)
	lying = units["n1"]
	lying.Node = ""
	_, err = f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: lying})
	requireWrongNode(t, err, `step file/web@n1 for node "n1"`)
	assert.NoFileExists(t, filepath.Join(f.root, "web.txt"))
	assert.NoFileExists(t, "web.txt")

	// Each worker runs its own.
	res, err := n1.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: units["n1"]})
	require.NoError(t, err)
	require.Equal(t, model.OutcomeCreated, res.Steps[0].Outcome, res.Steps[0].Error)
	assert.FileExists(t, filepath.Join(root1, "web.txt"))
	res, err = f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: execID, Cluster: "c1", Unit: units[""]})
	require.NoError(t, err)
	require.Equal(t, model.OutcomeCreated, res.Steps[0].Outcome, res.Steps[0].Error)
	assert.FileExists(t, filepath.Join(f.root, "control.txt"))
}
