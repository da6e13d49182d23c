package model

// Execution is one workflow run as the HTTP API shows it.
type Execution struct {
	ID        string          `json:"id"`
	Kind      ExecutionKind   `json:"kind"`
	Status    ExecutionStatus `json:"status"`
	StackID   string          `json:"stackId,omitempty"`
	ClusterID string          `json:"clusterId,omitempty"`
	RetryOf   string          `json:"retryOf,omitempty"`
	// WorkflowID and RunID locate the run in Temporal; Namespace too.
	WorkflowID string    `json:"workflowId"`
	RunID      string    `json:"runId"`
	Namespace  string    `json:"namespace,omitempty"`
	StartedAt  *Time     `json:"startedAt,omitempty"`
	ClosedAt   *Time     `json:"closedAt,omitempty"`
	Progress   *Progress `json:"progress,omitempty"`
	// Steps are every step's live state (id, node, action, status,
	// attempts, error).
	Steps  []StepProgress `json:"steps"`
	Plan   *Plan          `json:"plan,omitempty"`
	Report *Report        `json:"report,omitempty"`
	Error  string         `json:"error,omitempty"`
	// UIURL is the run's page in the Temporal UI.
	UIURL string `json:"uiUrl,omitempty"`
	// Awaiting is "decision" while a step waits for one, "approval" while
	// a plan does; Approval where a plan's approval stands (who decided,
	// the apply it started).
	Awaiting string    `json:"awaiting,omitempty"`
	Approval *Approval `json:"approval,omitempty"`
}

// Finished reports whether the execution has closed.
func (e *Execution) Finished() bool {
	switch e.Status {
	case ExecRunning, ExecWaiting, "":
		return false
	}
	return true
}

// Progress counts an execution's steps. Entries counts the step states
// there are in all: an execution shows the first page of them in Steps,
// GET /v1/executions/{id}/steps pages through the rest.
type Progress struct {
	Total   int      `json:"total"`
	Done    int      `json:"done"`
	Running int      `json:"running"`
	Waiting []string `json:"waiting,omitempty"`
	Entries int      `json:"entries,omitempty"`
}
