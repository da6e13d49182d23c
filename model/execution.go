package model

// ExecutionKind is what a workflow run does.
type ExecutionKind string

const (
	ExecApply   ExecutionKind = "apply"
	ExecDryRun  ExecutionKind = "dry-run"
	ExecGraph   ExecutionKind = "graph"
	ExecDestroy ExecutionKind = "destroy"
	ExecDrift   ExecutionKind = "drift"
)

// ExecutionStatus is the status of a whole execution as the API reports it.
type ExecutionStatus string

const (
	ExecRunning    ExecutionStatus = "running"
	ExecWaiting    ExecutionStatus = "waiting"
	ExecCompleted  ExecutionStatus = "completed"
	ExecFailed     ExecutionStatus = "failed"
	ExecRolledBack ExecutionStatus = "rolled_back"
	ExecCanceled   ExecutionStatus = "canceled"
	// ExecRejected ends a plan awaiting approval that was rejected, timed
	// out or no longer held when approved: nothing was changed.
	ExecRejected ExecutionStatus = "rejected"
)

// OnFailure decides what an execution does when a step fails.
type OnFailure string

const (
	OnFailureRollback OnFailure = "rollback"
	OnFailureStop     OnFailure = "stop"
	OnFailureContinue OnFailure = "continue"
	OnFailurePause    OnFailure = "pause"
)

// Decision is an operator's answer to a paused execution.
type Decision string

const (
	DecisionRetry    Decision = "retry"
	DecisionSkip     Decision = "skip"
	DecisionRollback Decision = "rollback"
	DecisionAbort    Decision = "abort"
)

// StepProgress is one step's live state, as the progress query returns it.
type StepProgress struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Node     string `json:"node,omitempty"`
	Action   Action `json:"action,omitempty"`
	Status   Status `json:"status"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
	// Note is what a person should know of the step beyond its status
	// (that it has no byte-exact rollback).
	Note      string       `json:"note,omitempty"`
	Changes   []AttrChange `json:"changes,omitempty"`
	StartedAt *Time        `json:"startedAt,omitempty"`
	EndedAt   *Time        `json:"endedAt,omitempty"`
	// Noop marks a step that only reported what it would change (a
	// dry-run, graph execute --noop, or the resource's meta.noop).
	Noop bool `json:"noop,omitempty"`
	// Log is the step's messages with Puppet's levels (StepLog).
	Log []LogMessage `json:"log,omitempty"`
}

// StepDeps is one step of an execution's graph: what it is and the steps
// it waits for, as the plan it runs ordered them.
type StepDeps struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Node      string   `json:"node,omitempty"`
	DependsOn []string `json:"dependsOn"`
}
