package contract

import (
	"time"

	"github.com/cairn-io/cairn/model"
)

// ApprovalSettings make a dry-run wait for approval of its plan and apply
// it once approved (the workflows' DryRunInput.Approval, which the API
// reads from ?approve=required and ?approvalTimeout=, or from the stack's
// four-eyes policy). Timeout 0 waits until a decision or cancellation.
type ApprovalSettings struct {
	Timeout time.Duration `json:"timeout,omitempty"`
	// ApprovalRule, when Required is set (a four-eyes policy,
	// model.ApprovalPolicy), says how many distinct principals must
	// approve and whether the author is one of them. Without it one
	// approval by anyone applies the plan.
	model.ApprovalRule
	// KeepSecrets says the request gave secrets, which the stack keeps
	// only once the plan is approved (SettleParamsInput).
	KeepSecrets bool `json:"keepSecrets,omitempty"`
}

// SettleParamsName is the activity that settles the parameters of a plan
// that waited for approval once it stops waiting (SettleParamsInput).
const SettleParamsName = "SettleParams"

// SettleParamsInput settles the parameters record Params (a
// ParamsExecution ref) of a plan that waited for approval. Approved with
// Keep, its secrets become the stack's kept ones (as an apply's do);
// otherwise (rejected, expired, cancelled, stale) the record is deleted
// and the copies in Executions' step data emptied, so the secrets sent
// with it are gone at once.
type SettleParamsInput struct {
	StackID    string   `json:"stackId"`
	Params     string   `json:"params"`
	Approved   bool     `json:"approved"`
	Keep       bool     `json:"keep,omitempty"`
	Executions []string `json:"executions,omitempty"`
}
