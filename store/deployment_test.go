package store

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestDeploymentData(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		s, err := WithSealer(openTest(t, dbURL), []byte("0123456789abcdef0123456789abcdef"))
		require.NoError(t, err)
		require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: "env", Name: "env", Nodes: []model.Node{{ID: "n1", Name: "node-1"}}}))

		data := []byte(`{"mysql":{"root_password":"s3cr3t"}}`)
		require.NoError(t, s.PutDeploymentData(ctx, "env", "n1", "g1", data))
		require.NoError(t, s.PutDeploymentData(ctx, "env", "n1", "g1", data), "put is idempotent")
		require.NoError(t, s.PutDeploymentData(ctx, "env", "n1", "g2", []byte(`{"v":2}`)))
		got, err := s.GetDeploymentData(ctx, "env", "n1", "g1")
		require.NoError(t, err)
		require.Equal(t, data, got)

		_, err = s.GetDeploymentData(ctx, "env", "n2", "g1")
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorContains(t, err, "n2")
		require.ErrorIs(t, s.PutDeploymentData(ctx, "ghost", "n1", "g1", data), ErrNotFound)

		// The database keeps no plaintext.
		rows, err := be.raw(t, dbURL).Query(`SELECT data FROM deployment_data`)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			var raw []byte
			require.NoError(t, rows.Scan(&raw))
			n++
			require.False(t, bytes.Contains(raw, []byte("s3cr3t")), "stored value holds the plaintext: %q", raw)
			require.True(t, bytes.HasPrefix(raw, sealedPrefix))
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 2, n)

		// Pruning keeps what a task run refers to and the execution being
		// recorded, and drops the rest.
		require.NoError(t, s.RecordTaskRun(ctx, model.TaskRun{ClusterID: "env", NodeID: "n1", TaskID: "t", ExecutionID: "g1"}))
		require.NoError(t, s.PutDeploymentData(ctx, "env", "n1", "g3", data))
		// An execution's common part (node "") is kept while any run of
		// that execution is.
		for _, exec := range []string{"g1", "g2"} {
			require.NoError(t, s.PutDeploymentData(ctx, "env", "", exec, []byte(`{"common":true}`)))
		}
		pruned, err := s.PruneDeploymentData(ctx, "env", "g3")
		require.NoError(t, err)
		require.Equal(t, 2, pruned, "g2 is referred to by no run")
		for _, node := range []string{"n1", ""} {
			_, err = s.GetDeploymentData(ctx, "env", node, "g2")
			require.ErrorIs(t, err, ErrNotFound)
		}
		for _, key := range [][2]string{{"n1", "g1"}, {"", "g1"}, {"n1", "g3"}} {
			_, err = s.GetDeploymentData(ctx, "env", key[0], key[1])
			require.NoError(t, err, key)
		}
	})
}
