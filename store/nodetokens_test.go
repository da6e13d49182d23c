package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestNodeTokens(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		c := &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
			{ID: "web-1", Name: "web-1", Mode: model.NodeAgent},
			{ID: "dev-1", Name: "dev-1"},
		}}
		require.NoError(t, s.PutCluster(ctx, c))

		_, err := s.NodeTokenHash(ctx, "c1", "web-1")
		require.ErrorIs(t, err, ErrNotFound, "no token issued yet")
		require.ErrorIs(t, s.SetNodeTokenHash(ctx, "c1", "dev-1", []byte("h")), ErrNotFound, "a local node has no credential")
		require.ErrorIs(t, s.SetNodeTokenHash(ctx, "c1", "db-9", []byte("h")), ErrNotFound)
		require.ErrorIs(t, s.SetNodeTokenHash(ctx, "c2", "web-1", []byte("h")), ErrNotFound)

		require.NoError(t, s.SetNodeTokenHash(ctx, "c1", "web-1", []byte("first")))
		require.NoError(t, s.SetNodeTokenHash(ctx, "c1", "web-1", []byte("second")))
		got, err := s.NodeTokenHash(ctx, "c1", "web-1")
		require.NoError(t, err)
		require.Equal(t, []byte("second"), got, "a new token replaces the old one")

		// Saving the cluster with the node unchanged keeps its token.
		require.NoError(t, s.PutCluster(ctx, c))
		_, err = s.NodeTokenHash(ctx, "c1", "web-1")
		require.NoError(t, err)

		// A node that becomes local loses its token, and does not get it
		// back by becoming an agent node again.
		c.Nodes[0].Mode = model.NodeLocal
		require.NoError(t, s.PutCluster(ctx, c))
		_, err = s.NodeTokenHash(ctx, "c1", "web-1")
		require.ErrorIs(t, err, ErrNotFound)
		c.Nodes[0].Mode = model.NodeAgent
		require.NoError(t, s.PutCluster(ctx, c))
		_, err = s.NodeTokenHash(ctx, "c1", "web-1")
		require.ErrorIs(t, err, ErrNotFound)

		// A cluster deleted and created again starts without tokens.
		require.NoError(t, s.SetNodeTokenHash(ctx, "c1", "web-1", []byte("third")))
		require.NoError(t, s.DeleteCluster(ctx, "c1"))
		require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{{ID: "web-1", Name: "web-1", Mode: model.NodeAgent}}}))
		_, err = s.NodeTokenHash(ctx, "c1", "web-1")
		require.ErrorIs(t, err, ErrNotFound)
	})
}
