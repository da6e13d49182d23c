package model

// GraphExecutionRequest is the body of POST /v1/clusters/{id}/executions:
// the graph types to execute on the cluster and how.
type GraphExecutionRequest struct {
	Type        string    `json:"type,omitempty"`
	Types       []string  `json:"types,omitempty"`
	Nodes       []string  `json:"nodes,omitempty"`
	Tasks       []string  `json:"tasks,omitempty"`
	DryRun      bool      `json:"dryRun,omitempty"`
	Noop        bool      `json:"noop,omitempty"`
	Force       bool      `json:"force,omitempty"`
	OnFailure   OnFailure `json:"onFailure,omitempty"`
	Parallelism int       `json:"parallelism,omitempty"`
	// Events name what this execution is (Fuel's deploy_changes, a
	// configuration resource such as nova_config): a task that already ran
	// on a node with the same parameters runs there again only when its
	// reexecute_on or refresh_on names one of them.
	Events []string `json:"events,omitempty"`
}
