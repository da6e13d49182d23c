package contract

import "time"

// ApprovalSettings make a dry-run wait for approval of its plan and apply
// it once approved (the workflows' DryRunInput.Approval, which the API
// reads from ?approve=required and ?approvalTimeout=, or from the stack's
// four-eyes policy). Timeout 0 waits until a decision or cancellation.
type ApprovalSettings struct {
	Timeout time.Duration `json:"timeout,omitempty"`
	// Required, when set (a four-eyes policy, model.ApprovalPolicy),
	// is how many distinct principals must approve; Author, who started
	// the execution, is not one of them unless AuthorMayApprove. Without
	// it one approval by anyone applies the plan.
	Required         int    `json:"required,omitempty"`
	AuthorMayApprove bool   `json:"authorMayApprove,omitempty"`
	Author           string `json:"author,omitempty"`
	// MayApprove says who may approve; Policy why the execution waits.
	MayApprove string `json:"mayApprove,omitempty"`
	Policy     string `json:"policy,omitempty"`
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
