package graphe2e

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
	"github.com/cairn-io/cairn/workflows"
)

// staleList is a store whose first ListClusters answers what the store
// held when it was asked, but only once released: a Sync that read the
// clusters before a cluster was added, and reconciles after.
type staleList struct {
	store.Store
	first   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *staleList) ListClusters(ctx context.Context) ([]*model.Cluster, error) {
	cl, err := s.Store.ListClusters(ctx)
	if s.first.CompareAndSwap(false, true) {
		close(s.entered)
		<-s.release
	}
	return cl, err
}

// A Sync of the local nodes that read the clusters before a cluster was
// created does not stop the worker a later Sync started for its node:
// Syncs take turns, the later one reading the store after the earlier
// one is done. (Before, a periodic Sync racing the Sync after a cluster's
// creation could leave its node without a worker: "node n0 has no agent
// polling".)
func TestLocalNodesSyncsTakeTurns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dev := testenv.Temporal(t)
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	gated := &staleList{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	nodes := worker.NewLocalNodes(dev.Client, worker.Deps{Store: gated, Logger: testLogger()}, t.TempDir(), worker.Options{})
	t.Cleanup(nodes.Stop)

	stale := make(chan error, 1)
	go func() { stale <- nodes.Sync(ctx) }()
	<-gated.entered
	cluster := "c" + randomHex(4)
	require.NoError(t, st.PutRelease(ctx, &model.Release{ID: "rel", Name: "release"}))
	require.NoError(t, st.PutCluster(ctx, &model.Cluster{ID: cluster, Name: "env", ReleaseID: "rel",
		Nodes: []model.Node{{ID: "n0", Roles: []string{"compute"}, Mode: model.NodeLocal}}}))
	fresh := make(chan error, 1)
	go func() { fresh <- nodes.Sync(ctx) }()
	// Give the later Sync time to finish, were it not waiting its turn.
	select {
	case err := <-fresh:
		fresh <- err
	case <-time.After(2 * time.Second):
	}
	close(gated.release)
	require.NoError(t, <-stale)
	require.NoError(t, <-fresh)
	require.True(t, nodes.Serving(workflows.NodeTaskQueue(cluster, "n0")), "the earlier Sync stopped the node's worker")
}
