package prepare

import (
	"context"

	"github.com/cairn-io/cairn/model"
)

// GraphStore is what preparing a graph execution reads and writes: the
// cluster, its release and graph layers, snapshots (the pinned graphs and
// expansions), node history, and the nodes' deployment data that Fuel
// expressions read and later executions compare against. store.Store
// satisfies it.
type GraphStore interface {
	GetCluster(ctx context.Context, id string) (*model.Cluster, error)
	GetRelease(ctx context.Context, id string) (*model.Release, error)
	GetGraph(ctx context.Context, layer model.Layer, ownerID, graphType string) (*model.StoredGraph, error)
	PutSnapshot(ctx context.Context, kind string, content []byte) (hash string, err error)
	GetSnapshot(ctx context.Context, hash string) (*model.Snapshot, error)
	NodeTaskRuns(ctx context.Context, clusterID, nodeID string) (map[string]*model.TaskRun, error)
	PutDeploymentData(ctx context.Context, clusterID, nodeID, execID string, data []byte) error
	GetDeploymentData(ctx context.Context, clusterID, nodeID, execID string) ([]byte, error)
}
