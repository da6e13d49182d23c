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
