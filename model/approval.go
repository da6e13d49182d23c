package model

import "time"

// ApprovalStatus is where a plan awaiting approval stands.
type ApprovalStatus string

// Approval statuses.
const (
	ApprovalAwaiting ApprovalStatus = "awaiting"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalRejected ApprovalStatus = "rejected"
	ApprovalExpired  ApprovalStatus = "expired"
	// ApprovalStale ends a plan that no longer held when approved.
	ApprovalStale ApprovalStatus = "stale"
)

// Approval is where a plan awaiting approval stands: who decided, when,
// why it ended unapplied, the apply it started and that apply's report.
type Approval struct {
	Status ApprovalStatus `json:"status"`
	// Base is the stack's last execution when the plan was made.
	Base     string     `json:"base,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
	By       string     `json:"by,omitempty"`
	Comment  string     `json:"comment,omitempty"`
	At       *time.Time `json:"at,omitempty"`
	// Reason says why a plan ended without being applied (what moved).
	Reason string `json:"reason,omitempty"`
	// ApplyExecutionID is the apply the approval started; Report its
	// report once it completed.
	ApplyExecutionID string  `json:"applyExecutionId,omitempty"`
	Report           *Report `json:"report,omitempty"`
	// Four eyes: the rule the plan waits under, and the approvals given
	// so far.
	ApprovalRule
	Approvals []ApprovalVote `json:"approvals,omitempty"`
}

// ApprovalRule is how a plan is approved, fixed when it starts: Required
// distinct approvals are needed (0 or 1: one, by anyone allowed); Author
// started the plan and may approve it only when AuthorMayApprove;
// MayApprove says who may approve; Policy says why the execution waits
// when the request did not ask for approval (a four-eyes ApprovalPolicy).
type ApprovalRule struct {
	Required         int    `json:"required,omitempty"`
	Author           string `json:"author,omitempty"`
	AuthorMayApprove bool   `json:"authorMayApprove,omitempty"`
	MayApprove       string `json:"mayApprove,omitempty"`
	Policy           string `json:"policy,omitempty"`
}
