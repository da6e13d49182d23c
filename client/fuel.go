package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cairn-io/cairn/model"
)

// ClusterSettings reads a cluster's settings tree ({} when it has none).
func (c *Client) ClusterSettings(ctx context.Context, clusterID string) (map[string]any, error) {
	var out model.SettingsDocument
	_, err := c.do(ctx, http.MethodGet, "/v1/clusters/"+esc(clusterID)+"/settings", nil, nil, &out)
	return out.Settings, err
}

// ReplaceClusterSettings replaces a cluster's settings whole and returns
// what is stored.
func (c *Client) ReplaceClusterSettings(ctx context.Context, clusterID string, settings map[string]any) (map[string]any, error) {
	var out model.SettingsDocument
	_, err := c.do(ctx, http.MethodPut, "/v1/clusters/"+esc(clusterID)+"/settings", nil, model.SettingsDocument{Settings: settings}, &out)
	return out.Settings, err
}

// PatchClusterSettings applies a JSON merge patch (RFC 7386: objects
// merge, null removes a key) to a cluster's settings and returns the
// result.
func (c *Client) PatchClusterSettings(ctx context.Context, clusterID string, patch map[string]any) (map[string]any, error) {
	var out model.SettingsDocument
	_, err := c.do(ctx, http.MethodPatch, "/v1/clusters/"+esc(clusterID)+"/settings", nil, patch, &out)
	return out.Settings, err
}

// ListAllGraphs lists every stored graph the filter selects, with its
// owner, type, name and the clusters that merge it (GET /v1/graphs).
func (c *Client) ListAllGraphs(ctx context.Context, f model.GraphFilter) ([]model.GraphMeta, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("layer", string(f.Layer))
	set("owner", f.OwnerID)
	set("type", f.Type)
	var out model.GraphMetaList
	_, err := c.do(ctx, http.MethodGet, "/v1/graphs", q, nil, &out)
	if out.Graphs == nil && err == nil {
		out.Graphs = []model.GraphMeta{}
	}
	return out.Graphs, err
}
