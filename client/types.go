package client

import (
	"time"

	"github.com/cairn-io/cairn/model"
)

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

// ExecutionFilter selects executions to list.
type ExecutionFilter struct {
	Stack     string
	Cluster   string
	Kind      model.ExecutionKind
	Status    model.ExecutionStatus
	Limit     int
	PageToken string
}
