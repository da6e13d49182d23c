package model

// ReleaseInput is the body of POST /v1/releases and PUT /v1/releases/{id}.
type ReleaseInput struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Version is the release's version (Fuel's "2015.1.0-8.0"), the value
	// of the {OPENSTACK_VERSION} placeholder.
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Labels replace the release's when given (nil keeps them).
	Labels map[string]string `json:"labels,omitempty"`
}

// PluginInput is the body of POST /v1/plugins and PUT /v1/plugins/{id}.
type PluginInput struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
}

// ClusterInput is the body of POST /v1/clusters and PUT /v1/clusters/{id}.
// Nodes (with their attributes) and plugin order are replaced whole;
// settings are replaced when given and kept otherwise (they have routes of
// their own: /v1/clusters/{id}/settings).
type ClusterInput struct {
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name"`
	ReleaseID string         `json:"releaseId,omitempty"`
	PluginIDs []string       `json:"pluginIds,omitempty"`
	Nodes     []Node         `json:"nodes,omitempty"`
	Settings  map[string]any `json:"settings,omitempty"`
	// Labels replace the cluster's when given (nil keeps them).
	Labels map[string]string `json:"labels,omitempty"`
}
