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

// ConsumeActName is the activity a workflow runs when an operator's act
// arrives by Update (an approval, a rejection, a decision on waiting
// steps): it consumes the one-time nonce the starter recorded for that act
// on this execution (the workflow id Temporal names) and returns the
// principal recorded with it, so who acted is the store's word, not the
// Update's.
const ConsumeActName = "ConsumeAct"

// ActNotIssuedType marks an act whose nonce is unknown, was issued for
// another execution or act, or was used by another Update: nothing
// changes.
const ActNotIssuedType = "ActNotIssued"

// The acts a nonce names.
const (
	ActApprove = "approve"
	ActReject  = "reject"
	ActDecide  = "decide"
)

// ConsumeActInput names the act's nonce, the act, and the id of the
// Update that carries it: the nonce is consumed by that Update of that
// run (Temporal's run id), so the same request sent again under another
// Update id is refused, while a retry of the activity passes.
type ConsumeActInput struct {
	Nonce  string `json:"nonce"`
	Act    string `json:"act"`
	Update string `json:"update"`
}

// ConsumeActResult is who the nonce was issued to ("" is the anonymous
// token).
type ConsumeActResult struct {
	By string `json:"by"`
}

// ApprovalAct is the act of an approval's answer.
func ApprovalAct(approve bool) string {
	if approve {
		return ActApprove
	}
	return ActReject
}
