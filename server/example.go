package server

import (
	"context"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/examples"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// SeedExample creates the example release ("example", with
// examples/graphs/release.yaml), plugin ("monitoring", plugin.yaml) and a
// cluster of three local nodes using both (with cluster.yaml), unless a
// cluster of that id exists already.
func SeedExample(ctx context.Context, st store.Store, cat *kinds.Catalogue, clusterID string) error {
	if _, err := st.GetCluster(ctx, clusterID); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var nodes []model.Node
	raw, err := examples.Files.ReadFile("graphs/nodes.yaml")
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, &nodes); err != nil {
		return fmt.Errorf("graphs/nodes.yaml: %w", err)
	}
	if err := st.PutRelease(ctx, &model.Release{ID: "example", Name: "Example release"}); err != nil {
		return err
	}
	if err := st.PutPlugin(ctx, &model.Plugin{ID: "monitoring", Name: "Monitoring", Version: "1.0.0"}); err != nil {
		return err
	}
	cluster := &model.Cluster{ID: clusterID, Name: clusterID, ReleaseID: "example", PluginIDs: []string{"monitoring"}, Nodes: nodes}
	if err := st.PutCluster(ctx, cluster); err != nil {
		return err
	}
	for _, g := range []struct {
		layer model.Layer
		owner string
		file  string
	}{
		{model.LayerRelease, "example", "graphs/release.yaml"},
		{model.LayerPlugin, "monitoring", "graphs/plugin.yaml"},
		{model.LayerCluster, clusterID, "graphs/cluster.yaml"},
	} {
		src, err := examples.Files.ReadFile(g.file)
		if err != nil {
			return err
		}
		// Layers above the release override or reference its tasks, so
		// they are read partially; the merged graph is checked when run.
		opts := graphs.Options{Catalogue: cat, Partial: g.layer != model.LayerRelease}
		parsed, err := graphs.ParseGraph(opts, graphs.Source{Name: g.file, Data: src})
		if err != nil {
			return fmt.Errorf("%s: %w", g.file, err)
		}
		if err := st.PutGraph(ctx, &model.StoredGraph{
			Layer: g.layer, OwnerID: g.owner, Type: parsed.Type, Name: parsed.Name,
			Source: src, ContentType: "application/yaml", Graph: parsed,
		}); err != nil {
			return fmt.Errorf("%s: %w", g.file, err)
		}
	}
	return nil
}
