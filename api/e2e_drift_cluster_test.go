package api

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// TestE2EDriftOnCluster applies a stack on a cluster of local nodes and
// follows it through drift: the stack records the cluster, the drift check
// plans on that cluster's node and sees a file changed there, the repair
// restores it there, an apply to another cluster (or deleting the stack's
// cluster) is refused naming both, and the destroy (given no cluster)
// removes the file from the node.
func TestE2EDriftOnCluster(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 5*time.Minute)
	suffix := strings.ToLower(h.token[len(h.token)-8:])
	node := []model.Node{{ID: "n1", Roles: []string{"web"}, Mode: model.NodeLocal}}
	home, err := h.client.CreateCluster(ctx, model.ClusterInput{ID: "home-" + suffix, Name: "home", Nodes: node})
	require.NoError(t, err)
	other, err := h.client.CreateCluster(ctx, model.ClusterInput{ID: "other-" + suffix, Name: "other", Nodes: node})
	require.NoError(t, err)
	require.NoError(t, h.nodes.Sync(ctx))

	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "on-a-cluster"})
	require.NoError(t, err)
	pkg := "kind: File\nmetadata: {name: motd}\nspec: {path: /motd, content: \"hello\\n\"}\ntarget: {roles: [web]}\n"
	mustStatus(t, h.applyWait(st.ID, pkg, client.ApplyOptions{Cluster: home.ID}), model.ExecCompleted)
	target := filepath.Join(h.nodes.NodeRoot(home.ID, "n1"), "motd")
	requireFile(t, target, "hello\n")

	t.Run("the stack records its cluster", func(t *testing.T) {
		got, err := h.client.GetStack(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, home.ID, got.ClusterID)
		require.Len(t, got.Resources, 1)
		assert.Equal(t, "n1", got.Resources[0].Node)
	})

	t.Run("another cluster is refused naming both", func(t *testing.T) {
		_, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg), Format: "yaml"}, client.ApplyOptions{Cluster: other.ID})
		require.True(t, client.IsStatus(err, http.StatusConflict), "%v", err)
		assert.Contains(t, err.Error(), home.ID)
		assert.Contains(t, err.Error(), other.ID)
		_, err = h.client.DeleteStack(ctx, st.ID, client.DeleteOptions{Cluster: other.ID})
		require.True(t, client.IsStatus(err, http.StatusConflict), "%v", err)
		_, err = os.Stat(filepath.Join(h.nodes.NodeRoot(other.ID, "n1"), "motd"))
		assert.ErrorIs(t, err, os.ErrNotExist, "the refused apply wrote on the other cluster's node")
		err = h.client.DeleteCluster(ctx, home.ID)
		require.True(t, client.IsStatus(err, http.StatusConflict), "the stack's cluster was deleted: %v", err)
		assert.Contains(t, err.Error(), st.ID)
	})

	t.Run("an apply naming no cluster stays on the recorded one", func(t *testing.T) {
		ex := h.applyWait(st.ID, pkg, client.ApplyOptions{})
		mustStatus(t, ex, model.ExecCompleted)
		wantReport(t, ex.Report, model.Report{Unchanged: 1})
		assert.Equal(t, home.ID, ex.ClusterID)
	})

	_, err = h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h"})
	require.NoError(t, err)
	first := h.triggerCheck(ctx, t, st.ID, "")
	require.Empty(t, first.Error, "%+v", first)
	require.False(t, first.Drifted, "%+v", first)

	require.NoError(t, os.WriteFile(target, []byte("changed behind Cairn's back\n"), 0o644))
	var drifted *model.DriftCheck
	t.Run("the check plans on the cluster's node and reports the change", func(t *testing.T) {
		drifted = h.triggerCheck(ctx, t, st.ID, first.ExecutionID)
		require.Empty(t, drifted.Error, "%+v", drifted)
		require.True(t, drifted.Drifted, "%+v", drifted)
		require.Len(t, drifted.Resources, 1)
		res := drifted.Resources[0]
		assert.Equal(t, model.ActionUpdate, res.Action)
		assert.Equal(t, "n1", res.Node)
		assert.NotEmpty(t, res.Changes, "no diff")
		requireFile(t, target, "changed behind Cairn's back\n")
	})

	t.Run("the repair restores the file on the node", func(t *testing.T) {
		_, err := h.client.PatchDrift(ctx, st.ID, model.DriftPatch{Repair: ptr(true)})
		require.NoError(t, err)
		got := h.triggerCheck(ctx, t, st.ID, drifted.ExecutionID)
		require.True(t, got.Drifted, "%+v", got)
		require.NotNil(t, got.Repair)
		require.Equal(t, model.RepairApplied, got.Repair.Status, "%+v", got.Repair)
		requireFile(t, target, "hello\n")
		repair, err := h.client.GetExecution(ctx, got.Repair.ExecutionID)
		require.NoError(t, err)
		assert.Equal(t, home.ID, repair.ClusterID)
		rec, err := h.client.GetStack(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, home.ID, rec.ClusterID, "the repair moved the stack's cluster")
	})

	t.Run("the destroy reaches the node", func(t *testing.T) {
		ex, err := h.client.DeleteStack(ctx, st.ID, client.DeleteOptions{Wait: true})
		require.NoError(t, err)
		mustStatus(t, ex, model.ExecCompleted)
		assert.Equal(t, home.ID, ex.ClusterID)
		_, err = os.Stat(target)
		assert.ErrorIs(t, err, os.ErrNotExist, "the destroy left the file")
		_, err = h.client.GetStack(ctx, st.ID)
		assert.True(t, client.IsStatus(err, http.StatusNotFound), "%v", err)
		require.NoError(t, h.client.DeleteCluster(ctx, home.ID), "the cluster of a deleted stack")
	})
}

// requireFile checks a file's content.
func requireFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, string(b), fmt.Sprintf("content of %s", path))
}
