package model

// Node is one host of a cluster. Local nodes are served by the server's own
// worker inside a directory of their own; agent nodes by `cairn agent`.
type Node struct {
	ID    string   `json:"id" yaml:"id"`
	Name  string   `json:"name" yaml:"name"`
	Roles []string `json:"roles" yaml:"roles"`
	Mode  NodeMode `json:"mode,omitempty" yaml:"mode,omitempty"`
	// Attributes are the node's own deployment data (Fuel's per-node
	// facts: fqdn, addresses, anything a condition or a placeholder may
	// read), merged over the cluster's settings for that node.
	Attributes map[string]any `json:"attributes,omitempty" yaml:"attributes,omitempty"`
	// Facts are what the node's agent last reported of its host (see
	// NodeFacts): read-only, set by the agent API alone (a cluster
	// written with facts keeps the stored ones), nil until a report.
	Facts *NodeFacts `json:"facts,omitempty" yaml:"facts,omitempty"`
}

type NodeMode string

const (
	NodeLocal NodeMode = "local"
	NodeAgent NodeMode = "agent"
)

// ControlPlane is the node name of steps with no node: the server's worker
// host (Fuel's "master").
const ControlPlane = "master"

// Release owns release-level graphs.
type Release struct {
	ID   string `json:"id" yaml:"id"`
	Name string `json:"name" yaml:"name"`
	// Version is the release's version string (Fuel's "2015.1.0-8.0"),
	// the value of the {OPENSTACK_VERSION} placeholder.
	Version     string `json:"version,omitempty" yaml:"version,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Labels are key=value pairs token scopes select by (see Grant).
	Labels    map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	CreatedAt Time              `json:"createdAt" yaml:"createdAt"`
	UpdatedAt Time              `json:"updatedAt" yaml:"updatedAt"`
}

// Plugin owns plugin-level graphs.
type Plugin struct {
	ID          string `json:"id" yaml:"id"`
	Name        string `json:"name" yaml:"name"`
	Version     string `json:"version,omitempty" yaml:"version,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	CreatedAt   Time   `json:"createdAt" yaml:"createdAt"`
	UpdatedAt   Time   `json:"updatedAt" yaml:"updatedAt"`
}

// Cluster has a release, ordered attached plugins and nodes.
type Cluster struct {
	ID        string   `json:"id" yaml:"id"`
	Name      string   `json:"name" yaml:"name"`
	ReleaseID string   `json:"releaseId,omitempty" yaml:"releaseId,omitempty"`
	PluginIDs []string `json:"pluginIds,omitempty" yaml:"pluginIds,omitempty"`
	Nodes     []Node   `json:"nodes" yaml:"nodes"`
	// Settings is the cluster's settings tree (Fuel's editable attributes):
	// the target of legacy `settings:a.b.value` conditions and the base of
	// every node's deployment data.
	Settings map[string]any `json:"settings,omitempty" yaml:"settings,omitempty"`
	// Labels are key=value pairs token scopes select by (see Grant).
	Labels    map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	CreatedAt Time              `json:"createdAt" yaml:"createdAt"`
	UpdatedAt Time              `json:"updatedAt" yaml:"updatedAt"`
}

// Node returns the node with the given id or name.
func (c *Cluster) Node(idOrName string) *Node {
	for i := range c.Nodes {
		if c.Nodes[i].ID == idOrName || c.Nodes[i].Name == idOrName {
			return &c.Nodes[i]
		}
	}
	return nil
}

// GraphOwner is one owner of graphs: a layer and the id of its release,
// cluster or plugin.
type GraphOwner struct {
	Layer Layer
	ID    string
}

// GraphOwners are the owners whose graphs a run on the cluster merges, in
// merge order: its release (when it has one), itself, then its plugins in
// their order.
func (c *Cluster) GraphOwners() []GraphOwner {
	out := make([]GraphOwner, 0, len(c.PluginIDs)+2)
	if c.ReleaseID != "" {
		out = append(out, GraphOwner{LayerRelease, c.ReleaseID})
	}
	out = append(out, GraphOwner{LayerCluster, c.ID})
	for _, id := range c.PluginIDs {
		out = append(out, GraphOwner{LayerPlugin, id})
	}
	return out
}

// TaskRun is a node's history entry: the last successful run of a task.
type TaskRun struct {
	ClusterID   string `json:"clusterId"`
	NodeID      string `json:"nodeId"`
	TaskID      string `json:"taskId"`
	ExecutionID string `json:"executionId"`
	// Digest is a hash of the task's resolved parameters, so a condition
	// can ask whether anything changed since the last run.
	Digest string `json:"digest"`
	At     Time   `json:"at"`
}
