package client

import (
	"time"

	"github.com/cairn-io/cairn/model"
)

// ErrorDetail is one positioned problem of a request.
type ErrorDetail struct {
	Document string `json:"document"`
	Index    int    `json:"index"`
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Message  string `json:"message"`
}

// StackInput creates a stack.
type StackInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	URLs        []string `json:"urls,omitempty"`
}

// Stack is a stack record (pkger shape).
type Stack struct {
	ID           string                `json:"id"`
	StackID      string                `json:"stack_id"`
	Name         string                `json:"name"`
	Description  string                `json:"description"`
	URLs         []string              `json:"urls"`
	CreatedAt    model.Time            `json:"createdAt"`
	UpdatedAt    model.Time            `json:"updatedAt"`
	Config       map[string]any        `json:"config"`
	Resources    []model.StackResource `json:"resources"`
	SnapshotHash string                `json:"snapshotHash,omitempty"`
	// LastExecutionID is the apply or destroy that last wrote the record.
	LastExecutionID string `json:"lastExecutionId,omitempty"`
}

// PackageSummary describes a valid package: its resources by kind, what
// each depends on, and the environment and secret references it uses.
type PackageSummary struct {
	Resources  int            `json:"resources"`
	Kinds      map[string]int `json:"kinds"`
	Items      []SummaryItem  `json:"items"`
	Graphs     int            `json:"graphs,omitempty"`
	EnvRefs    []string       `json:"envRefs"`
	SecretRefs []string       `json:"secretRefs"`
}

// SummaryItem is one resource of a package summary.
type SummaryItem struct {
	Kind         string   `json:"kind"`
	Name         string   `json:"name"`
	DependsOn    []string `json:"dependsOn,omitempty"`
	Associations []string `json:"associations,omitempty"`
}

// DryRun is a plan: summary counts, the per-step diff and what is missing.
type DryRun struct {
	ExecutionID    string            `json:"executionId"`
	Summary        model.Summary     `json:"summary"`
	Diff           []model.PlanStep  `json:"diff"`
	MissingEnvRefs []string          `json:"missingEnvRefs"`
	MissingSecrets []string          `json:"missingSecrets"`
	MissingVars    []string          `json:"missingVars"`
	Failures       []model.StepError `json:"failures,omitempty"`
}

// ApplyOptions steer an apply. Cluster names the cluster whose nodes the
// package's targeted resources run on.
type ApplyOptions struct {
	Wait        bool
	OnFailure   model.OnFailure
	Parallelism int
	Cluster     string
	// Params are env ref values and secrets for this apply; when given,
	// the package is sent in an apply envelope.
	Params model.ApplyParams
	// ApproveRequired plans the apply and waits for its approval
	// (Approve) instead of applying; ApprovalTimeout, when positive, ends
	// the plan unapplied after that long.
	ApproveRequired bool
	ApprovalTimeout time.Duration
}

// ExportSelector picks objects of the given kinds.
type ExportSelector struct {
	Dir       string   `json:"dir,omitempty"`
	Names     []string `json:"names,omitempty"`
	Recursive bool     `json:"recursive,omitempty"`
}

// ExportRequest is kinds with a selector, or stacks' resources: one stack
// or every stack, narrowed to those carrying one of Labels and those named
// in Resources ("Kind/name"), or All.
type ExportRequest struct {
	StackID   string          `json:"stackId,omitempty"`
	Kinds     []string        `json:"kinds,omitempty"`
	Selector  *ExportSelector `json:"selector,omitempty"`
	Labels    []string        `json:"labels,omitempty"`
	Resources []string        `json:"resources,omitempty"`
	All       bool            `json:"all,omitempty"`
}

// ReleaseInput, PluginInput and ClusterInput create or update records.
type ReleaseInput struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
}

type PluginInput struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
}

type ClusterInput struct {
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name"`
	ReleaseID string         `json:"releaseId,omitempty"`
	PluginIDs []string       `json:"pluginIds,omitempty"`
	Nodes     []model.Node   `json:"nodes,omitempty"`
	Settings  map[string]any `json:"settings,omitempty"`
}

// GraphInfo describes a stored graph.
type GraphInfo struct {
	Layer       model.Layer `json:"layer"`
	OwnerID     string      `json:"ownerId"`
	Type        string      `json:"type"`
	Name        string      `json:"name,omitempty"`
	ContentType string      `json:"contentType,omitempty"`
	Tasks       int         `json:"tasks"`
	UpdatedAt   model.Time  `json:"updatedAt"`
	// UsedBy lists the clusters whose executions merge the graph (in
	// listings only).
	UsedBy []string `json:"usedBy,omitempty"`
}

// GraphExecutionRequest executes graph types on a cluster.
type GraphExecutionRequest struct {
	Type        string          `json:"type,omitempty"`
	Types       []string        `json:"types,omitempty"`
	Nodes       []string        `json:"nodes,omitempty"`
	Tasks       []string        `json:"tasks,omitempty"`
	DryRun      bool            `json:"dryRun,omitempty"`
	Noop        bool            `json:"noop,omitempty"`
	Force       bool            `json:"force,omitempty"`
	OnFailure   model.OnFailure `json:"onFailure,omitempty"`
	Parallelism int             `json:"parallelism,omitempty"`
	Events      []string        `json:"events,omitempty"`
}

// Execution is one workflow run.
type Execution struct {
	ID         string                `json:"id"`
	Kind       model.ExecutionKind   `json:"kind"`
	Status     model.ExecutionStatus `json:"status"`
	StackID    string                `json:"stackId,omitempty"`
	ClusterID  string                `json:"clusterId,omitempty"`
	RetryOf    string                `json:"retryOf,omitempty"`
	WorkflowID string                `json:"workflowId"`
	RunID      string                `json:"runId"`
	Namespace  string                `json:"namespace,omitempty"`
	StartedAt  *model.Time           `json:"startedAt,omitempty"`
	ClosedAt   *model.Time           `json:"closedAt,omitempty"`
	Progress   *Progress             `json:"progress,omitempty"`
	Steps      []model.StepProgress  `json:"steps"`
	Plan       *model.Plan           `json:"plan,omitempty"`
	Report     *model.Report         `json:"report,omitempty"`
	Error      string                `json:"error,omitempty"`
	UIURL      string                `json:"uiUrl,omitempty"`
	// Awaiting is "decision" while a step waits for one, "approval"
	// while a plan does; Approval where a plan's approval stands.
	Awaiting string          `json:"awaiting,omitempty"`
	Approval *model.Approval `json:"approval,omitempty"`
}

// Finished reports whether the execution has closed.
func (e *Execution) Finished() bool {
	switch e.Status {
	case model.ExecRunning, model.ExecWaiting, "":
		return false
	}
	return true
}

// Progress counts an execution's steps.
type Progress struct {
	Total   int      `json:"total"`
	Done    int      `json:"done"`
	Running int      `json:"running"`
	Waiting []string `json:"waiting,omitempty"`
}

// ExecutionFilter selects executions to list.
type ExecutionFilter struct {
	Stack     string
	Cluster   string
	Kind      model.ExecutionKind
	Status    model.ExecutionStatus
	Limit     int
	PageToken string
}

// ExecutionList is one page of executions.
type ExecutionList struct {
	Executions    []Execution `json:"executions"`
	NextPageToken string      `json:"nextPageToken"`
}

// Decision answers a paused execution.
type Decision struct {
	Action model.Decision `json:"action"`
	Step   string         `json:"step,omitempty"`
}

// DecisionResult says which step a decision was applied to.
type DecisionResult struct {
	Step   string         `json:"step"`
	Action model.Decision `json:"action"`
}
