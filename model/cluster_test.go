package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGraphOwnersMergeOrder(t *testing.T) {
	c := &Cluster{ID: "c1", ReleaseID: "r1", PluginIDs: []string{"p2", "p1"}}
	assert.Equal(t, []GraphOwner{
		{LayerRelease, "r1"}, {LayerCluster, "c1"}, {LayerPlugin, "p2"}, {LayerPlugin, "p1"},
	}, c.GraphOwners())

	bare := &Cluster{ID: "c2"}
	assert.Equal(t, []GraphOwner{{LayerCluster, "c2"}}, bare.GraphOwners(), "no release, no plugins: the cluster alone")
}
