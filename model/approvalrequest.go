package model

// ApprovalRequest is an operator's answer to a plan awaiting approval:
// the argument of the workflows' "approval" Update, which the API builds
// from POST /v1/executions/{id}/approve or /reject. By names who answered
// (the name of the API token used); never a secret. Nonce is the one-time
// nonce the starter recorded for this act on this execution, with By: the
// workflow takes who answered from the store's record of it, By being
// only what the sender claims.
type ApprovalRequest struct {
	Approve bool   `json:"approve"`
	Comment string `json:"comment,omitempty"`
	By      string `json:"by,omitempty"`
	Nonce   string `json:"nonce,omitempty"`
}
