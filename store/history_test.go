package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestTaskRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		c := &model.Cluster{ID: "env", Name: "env", Nodes: []model.Node{{ID: "n1", Name: "node-1"}}}
		must(t, s.PutCluster(ctx, c))

		at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))
		first := model.TaskRun{ClusterID: "env", NodeID: "n1", TaskID: "netconfig", ExecutionID: "g1", Digest: "d1", At: at}
		must(t, s.RecordTaskRun(ctx, first))
		got, err := s.LastTaskRun(ctx, "env", "n1", "netconfig")
		must(t, err)
		want := first
		want.At = time.Date(2026, 3, 1, 11, 0, 0, 123456000, time.UTC) // UTC, microseconds
		require.Equal(t, want, *got, "LastTaskRun")

		tests := []struct {
			name string
			run  model.TaskRun
			want string // execution recorded afterwards
		}{
			{"a later run replaces it", model.TaskRun{ClusterID: "env", NodeID: "n1", TaskID: "netconfig", ExecutionID: "g2", Digest: "d2", At: at.Add(time.Hour)}, "g2"},
			{"a late retry of an older run does not", model.TaskRun{ClusterID: "env", NodeID: "n1", TaskID: "netconfig", ExecutionID: "g0", Digest: "d0", At: at.Add(-time.Hour)}, "g2"},
			{"no time means now", model.TaskRun{ClusterID: "env", NodeID: "n1", TaskID: "netconfig", ExecutionID: "g3", Digest: "d3"}, "g3"},
		}
		for _, tt := range tests {
			must(t, s.RecordTaskRun(ctx, tt.run))
			got, err := s.LastTaskRun(ctx, "env", "n1", "netconfig")
			must(t, err)
			require.Equal(t, tt.want, got.ExecutionID, "%s: last run is %s, want %s", tt.name, got.ExecutionID, tt.want)
		}

		// Other tasks and nodes are separate entries.
		must(t, s.RecordTaskRun(ctx, model.TaskRun{ClusterID: "env", NodeID: "n2", TaskID: "netconfig", ExecutionID: "g9"}))
		got, err = s.LastTaskRun(ctx, "env", "n1", "netconfig")
		must(t, err)
		require.Equal(t, "g3", got.ExecutionID, "a run on n2 replaced n1's: %+v", got)
		_, err = s.LastTaskRun(ctx, "env", "n1", "never")
		wantErr(t, err, ErrNotFound, "never", "n1", "env")
		wantErr(t, s.RecordTaskRun(ctx, model.TaskRun{ClusterID: "ghost", NodeID: "n1", TaskID: "t"}), ErrNotFound, "ghost")

		// Saving the cluster (its nodes are replaced) keeps node history.
		must(t, s.PutCluster(ctx, &model.Cluster{ID: "env", Name: "env", Nodes: []model.Node{{ID: "n1", Name: "node-1", Roles: []string{"compute"}}}}))
		_, err = s.LastTaskRun(ctx, "env", "n1", "netconfig")
		require.NoError(t, err, "history lost when the cluster was saved")
		// Deleting the cluster deletes it.
		must(t, s.DeleteCluster(ctx, "env"))
		must(t, s.PutCluster(ctx, &model.Cluster{ID: "env", Name: "env again"}))
		_, err = s.LastTaskRun(ctx, "env", "n1", "netconfig")
		wantErr(t, err, ErrNotFound)
	})
}

// A batch of runs is recorded as each would be alone (an older run does
// not replace a newer one), in one transaction: a run of another cluster
// fails the batch, which leaves nothing. A node's runs read back at once.
func TestTaskRunsInBatches(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		must(t, s.PutCluster(ctx, &model.Cluster{ID: "env", Name: "env", Nodes: []model.Node{{ID: "n1", Name: "node-1"}, {ID: "n2", Name: "node-2"}}}))
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		run := func(node, task, exec string, at time.Time) model.TaskRun {
			return model.TaskRun{ClusterID: "env", NodeID: node, TaskID: task, ExecutionID: exec, Digest: "d-" + exec, At: at}
		}
		must(t, s.RecordTaskRuns(ctx, "env", []model.TaskRun{run("n1", "a", "g2", t0.Add(time.Hour)), run("n1", "b", "g2", t0.Add(time.Hour)), run("n2", "a", "g2", t0.Add(time.Hour))}))
		must(t, s.RecordTaskRuns(ctx, "env", []model.TaskRun{run("n1", "a", "g1", t0), run("n1", "c", "g1", t0)}))

		got, err := s.NodeTaskRuns(ctx, "env", "n1")
		must(t, err)
		require.Len(t, got, 3)
		require.Equal(t, "g2", got["a"].ExecutionID, "an older run does not replace a newer one")
		require.Equal(t, "g2", got["b"].ExecutionID)
		require.Equal(t, "g1", got["c"].ExecutionID)
		require.Equal(t, "n1", got["c"].NodeID)

		err = s.RecordTaskRuns(ctx, "env", []model.TaskRun{run("n2", "z", "g3", t0), {ClusterID: "other", NodeID: "n2", TaskID: "y"}})
		require.ErrorContains(t, err, `of cluster "other"`)
		got, err = s.NodeTaskRuns(ctx, "env", "n2")
		must(t, err)
		require.Len(t, got, 1, "a failed batch leaves nothing")
		require.ErrorIs(t, s.RecordTaskRuns(ctx, "ghost", []model.TaskRun{{ClusterID: "ghost", NodeID: "n1", TaskID: "a"}}), ErrNotFound)
		none, err := s.NodeTaskRuns(ctx, "env", "n9")
		must(t, err)
		require.Empty(t, none)
	})
}
