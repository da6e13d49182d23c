package contract

// ConsumeStartName is the activity every apply, destroy, dry-run and graph
// execution started by Cairn runs first: it consumes the start's one-time
// nonce (ConsumeStartInput), so a copy of the workflow's input started
// again by someone holding Temporal access runs nothing.
const ConsumeStartName = "ConsumeStart"

// StartNotIssuedType marks a workflow whose start nonce is unknown or was
// consumed by another run; nothing ran.
const StartNotIssuedType = "StartNotIssued"

// ConsumeStartInput names the nonce the starter recorded for the start;
// the activity takes the workflow id and run consuming it from Temporal
// (a retry by the same run passes).
type ConsumeStartInput struct {
	Nonce string `json:"nonce"`
}

// ConsumeApprovalName is the activity a plan awaiting approval runs when
// it is asked to approve or reject: it consumes the one-time nonce the
// starter recorded for that act on this execution (the workflow id
// Temporal names) and returns the principal recorded with it, so who
// decided is the store's word, not the Update's.
const ConsumeApprovalName = "ConsumeApproval"

// ApprovalNotIssuedType marks an approval or rejection whose nonce is
// unknown, was issued for another execution or act, or was used: the plan
// keeps waiting.
const ApprovalNotIssuedType = "ApprovalNotIssued"

// ConsumeApprovalInput names the act's nonce, the act (approve or
// reject) and the id of the Update that carries it: the nonce is consumed
// by that Update of that run (Temporal's run id), so the same request sent
// again under another Update id is refused, while a retry of the activity
// passes.
type ConsumeApprovalInput struct {
	Nonce   string `json:"nonce"`
	Approve bool   `json:"approve"`
	Update  string `json:"update"`
}

// ConsumeApprovalResult is who the nonce was issued to ("" is the
// anonymous token).
type ConsumeApprovalResult struct {
	By string `json:"by"`
}

// ApprovalAct is the act a nonce of an approval names.
func ApprovalAct(approve bool) string {
	if approve {
		return "approve"
	}
	return "reject"
}
