package model

import (
	"fmt"
	"time"
)

// MaxApprovers bounds ApprovalPolicy.Required.
const MaxApprovers = 10

// ApprovalPolicy is a stack's or cluster's four-eyes setting (PUT
// /v1/stacks/{id}/approvals, /v1/clusters/{id}/approvals): every apply of
// the stack, or graph execution on the cluster, plans and waits until
// Required distinct principals approved it. The author (who started it)
// is not one of them unless AuthorMayApprove.
type ApprovalPolicy struct {
	Required         int  `json:"required"`
	AuthorMayApprove bool `json:"authorMayApprove"`
}

// Normalize fills the default (one approver) and checks the bound.
func (p *ApprovalPolicy) Normalize() error {
	if p.Required == 0 {
		p.Required = 1
	}
	if p.Required < 1 || p.Required > MaxApprovers {
		return fmt.Errorf("required %d: want 1 to %d approvers", p.Required, MaxApprovers)
	}
	return nil
}

// ApprovalVote is one principal's approval of a plan.
type ApprovalVote struct {
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Comment string    `json:"comment,omitempty"`
}
