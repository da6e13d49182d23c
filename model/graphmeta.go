package model

// GraphMeta describes a stored graph without its tasks: an entry of the
// graph list (GET /v1/graphs, Fuel's graph metadata list), with its
// relations: the owner it is stored for and the clusters whose executions
// merge it (a release's graph for every cluster of the release, a plugin's
// for every cluster it is attached to, a cluster's for itself).
type GraphMeta struct {
	Layer     Layer    `json:"layer"`
	OwnerID   string   `json:"ownerId"`
	Type      string   `json:"type"`
	Name      string   `json:"name,omitempty"`
	UpdatedAt Time     `json:"updatedAt"`
	UsedBy    []string `json:"usedBy"`
}

// GraphFilter selects graphs of the graph list; a zero field selects all.
type GraphFilter struct {
	Layer   Layer
	OwnerID string
	Type    string
}

// GraphInfo describes one owner's stored graph without its tasks (the
// answer of the owner's graph routes): Tasks counts them.
type GraphInfo struct {
	Layer       Layer  `json:"layer"`
	OwnerID     string `json:"ownerId"`
	Type        string `json:"type"`
	Name        string `json:"name,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Tasks       int    `json:"tasks"`
	UpdatedAt   Time   `json:"updatedAt"`
	// UsedBy lists the clusters whose executions merge the graph (in
	// listings only).
	UsedBy []string `json:"usedBy,omitempty"`
}
