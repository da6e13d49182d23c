package model

// StackInput is the body of POST /v1/stacks.
type StackInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	URLs        []string `json:"urls,omitempty"`
	// Labels are key=value pairs token scopes select by (see Grant).
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
}

// StackRecord is a stack as the HTTP API shows it: pkger's stack record,
// with "stack_id" and an empty "config" next to Cairn's own fields so it
// reads as the records in pkger's documentation. Resources keep the
// distinction between never-associated (key absent) and associations
// removed (an empty list).
type StackRecord struct {
	ID           string          `json:"id"`
	StackID      string          `json:"stack_id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	URLs         []string        `json:"urls"`
	CreatedAt    Time            `json:"createdAt"`
	UpdatedAt    Time            `json:"updatedAt"`
	Config       map[string]any  `json:"config"`
	Resources    []StackResource `json:"resources"`
	SnapshotHash string          `json:"snapshotHash,omitempty"`
	// LastExecutionID is the apply or destroy that last wrote the record.
	LastExecutionID string `json:"lastExecutionId,omitempty"`
	// ClusterID is the cluster the last successful apply ran on; its
	// nodes hold the stack's targeted resources.
	ClusterID string `json:"clusterId,omitempty"`
	// Labels are key=value pairs token scopes select by (see Grant).
	Labels map[string]string `json:"labels,omitempty"`
}
