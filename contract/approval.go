package contract

import "time"

// ApprovalSettings make a dry-run wait for approval of its plan and apply
// it once approved (the workflows' DryRunInput.Approval, which the API
// reads from ?approve=required and ?approvalTimeout=). Timeout 0 waits
// until a decision or cancellation.
type ApprovalSettings struct {
	Timeout time.Duration `json:"timeout,omitempty"`
}
