package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestDeleteNodeTokenHash(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		require.NoError(t, s.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{{ID: "web-1", Name: "web-1", Mode: model.NodeAgent}}}))
		require.ErrorIs(t, s.DeleteNodeTokenHash(ctx, "c1", "web-1"), ErrNotFound, "no token yet")
		require.NoError(t, s.SetNodeTokenHash(ctx, "c1", "web-1", []byte("h")))
		require.NoError(t, s.DeleteNodeTokenHash(ctx, "c1", "web-1"))
		_, err := s.NodeTokenHash(ctx, "c1", "web-1")
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorIs(t, s.DeleteNodeTokenHash(ctx, "c1", "web-1"), ErrNotFound)
	})
}

func TestNodeFacts(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		c := &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
			{ID: "web-1", Name: "web-1", Mode: model.NodeAgent, Attributes: map[string]any{"fqdn": "web-1.ops"}},
			{ID: "dev-1", Name: "dev-1"},
		}}
		require.NoError(t, s.PutCluster(ctx, c))
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		f := &model.NodeFacts{Hostname: "web-1", Addresses: []string{"10.0.0.5/24"}, OS: model.OSFacts{ID: "debian", VersionID: "12"},
			CPUs: 4, MemoryBytes: 8 << 30, BootID: "b920bb6e-98f5-4e5d-8a5d-ef1f1e34e743", ReportedAt: at}
		require.ErrorIs(t, s.SetNodeFacts(ctx, "c1", "dev-1", f), ErrNotFound, "a local node has no agent to report")
		require.ErrorIs(t, s.SetNodeFacts(ctx, "c1", "db-9", f), ErrNotFound)
		require.ErrorIs(t, s.SetNodeFacts(ctx, "c2", "web-1", f), ErrNotFound)
		require.NoError(t, s.SetNodeFacts(ctx, "c1", "web-1", f))

		got, err := s.GetCluster(ctx, "c1")
		require.NoError(t, err)
		require.NotNil(t, got.Nodes[0].Facts)
		assert.Equal(t, *f, *got.Nodes[0].Facts)
		assert.Nil(t, got.Nodes[1].Facts)
		assert.Equal(t, map[string]any{"fqdn": "web-1.ops"}, got.Nodes[0].Attributes)
		list, err := s.ListClusters(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, "web-1", list[0].Nodes[0].Facts.Hostname)

		// A report replaces the last one.
		f2 := *f
		f2.BootID = "00000000-0000-0000-0000-000000000001"
		require.NoError(t, s.SetNodeFacts(ctx, "c1", "web-1", &f2))
		got, err = s.GetCluster(ctx, "c1")
		require.NoError(t, err)
		assert.Equal(t, f2.BootID, got.Nodes[0].Facts.BootID)

		// A cluster written with facts keeps the stored ones.
		forged := *got
		forged.Nodes = append([]model.Node(nil), got.Nodes...)
		forged.Nodes[0].Facts = &model.NodeFacts{Hostname: "forged", CPUs: 1}
		forged.Nodes[1].Facts = &model.NodeFacts{Hostname: "forged", CPUs: 1}
		require.NoError(t, s.PutCluster(ctx, &forged))
		got, err = s.GetCluster(ctx, "c1")
		require.NoError(t, err)
		assert.Equal(t, "web-1", got.Nodes[0].Facts.Hostname)
		assert.Nil(t, got.Nodes[1].Facts)

		// Facts go with their node.
		c.Nodes = c.Nodes[1:]
		require.NoError(t, s.PutCluster(ctx, c))
		c.Nodes = append(c.Nodes, model.Node{ID: "web-1", Name: "web-1", Mode: model.NodeAgent})
		require.NoError(t, s.PutCluster(ctx, c))
		got, err = s.GetCluster(ctx, "c1")
		require.NoError(t, err)
		assert.Nil(t, got.Nodes[1].Facts, "a node added again inherited the facts of the one that left")
	})
}
