package activities_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// putClusters stores clusters "home" and "other", each with a node n1 of
// role web.
func (f *fixture) putClusters() {
	f.t.Helper()
	for _, id := range []string{"home", "other"} {
		require.NoError(f.t, f.st.PutCluster(context.Background(), &model.Cluster{ID: id, Name: id,
			Nodes: []model.Node{{ID: "n1", Name: "n1", Roles: []string{"web"}, Mode: model.NodeLocal}}}))
	}
}

// Prepare runs a stack's apply, dry-run and destroy on the cluster its
// record names when the input names none, and refuses another cluster
// while a recorded resource is on a node; a record without node resources
// moves freely.
func TestPrepareRunsOnTheStacksCluster(t *testing.T) {
	f := newFixture(t)
	f.putClusters()
	ctx := context.Background()
	hash := f.snapshot("apiVersion: cairn/v1\nkind: File\nmetadata: {name: motd}\nspec: {path: /motd, content: x}\ntarget: {roles: [web]}\n")
	onNode := f.stack("")
	_, err := f.st.WriteStackRecord(ctx, onNode.ID, "applied", []model.StackResource{
		{Kind: "File", ID: "/motd", PkgName: "motd", Node: "n1"},
	}, hash, "home", true)
	require.NoError(t, err)
	local := f.stack("")
	_, err = f.st.WriteStackRecord(ctx, local.ID, "applied", []model.StackResource{
		{Kind: "File", ID: "/tmp/x", PkgName: "x"},
	}, hash, "home", true)
	require.NoError(t, err)

	tests := []struct {
		name      string
		stack     string
		mode      contract.Mode
		requested string
		want      string // "" with refused
		refused   bool
	}{
		{"apply naming no cluster", onNode.ID, contract.ModeApply, "", "home", false},
		{"dry-run naming no cluster", onNode.ID, contract.ModeDryRun, "", "home", false},
		{"destroy naming no cluster", onNode.ID, contract.ModeDestroy, "", "home", false},
		{"apply naming the recorded cluster", onNode.ID, contract.ModeApply, "home", "home", false},
		{"apply on another cluster", onNode.ID, contract.ModeApply, "other", "", true},
		{"dry-run on another cluster", onNode.ID, contract.ModeDryRun, "other", "", true},
		{"destroy on another cluster", onNode.ID, contract.ModeDestroy, "other", "", true},
		{"no resource on a node: another cluster", local.ID, contract.ModeApply, "other", "other", false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := f.acts.Prepare(ctx, contract.PrepareInput{ExecutionID: fmt.Sprintf("exec-%d", i), Mode: tc.mode,
				StackID: tc.stack, SnapshotHash: hash, ClusterID: tc.requested})
			if tc.refused {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"home"`)
				assert.Contains(t, err.Error(), `"other"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, plan.ClusterID)
		})
	}
}

// The record keeps the cluster an apply ran on; a destroy that leaves
// nothing clears it with the snapshot.
func TestStackRecordKeepsTheRunsCluster(t *testing.T) {
	f := newFixture(t)
	f.putClusters()
	ctx := context.Background()
	hash := f.snapshot(fmt.Sprintf("apiVersion: cairn/v1\nkind: File\nmetadata: {name: a}\nspec: {path: %s, content: x}\n", filepath.Join(f.root, "a")))
	s := f.stack("")
	record := func(execID string, plan *contract.PreparedPlan, destroy bool) *model.Stack {
		t.Helper()
		f.run(execID, plan)
		_, err := f.acts.WriteStackRecord(ctx, contract.WriteStackRecordInput{ExecutionID: execID, StackID: s.ID,
			SnapshotHash: hash, ClusterID: plan.ClusterID, Destroy: destroy, Changed: true})
		require.NoError(t, err)
		st, err := f.st.GetStack(ctx, s.ID)
		require.NoError(t, err)
		return st
	}

	applied := record("apply-1", f.prepare(contract.PrepareInput{ExecutionID: "apply-1", StackID: s.ID, SnapshotHash: hash, ClusterID: "home"}), false)
	require.Len(t, applied.Resources, 1)
	assert.Equal(t, "home", applied.ClusterID)

	plan := f.prepare(contract.PrepareInput{ExecutionID: "destroy-1", Mode: contract.ModeDestroy, StackID: s.ID})
	assert.Equal(t, "home", plan.ClusterID, "the destroy did not take the recorded cluster")
	destroyed := record("destroy-1", plan, true)
	assert.Empty(t, destroyed.Resources)
	assert.Empty(t, destroyed.SnapshotHash)
	assert.Empty(t, destroyed.ClusterID, "a destroy that left nothing kept the cluster")
}
