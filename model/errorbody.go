package model

// ErrorInfo is the "error" member of every error answer of the HTTP API:
// a stable code, a message and every positioned detail (an empty list, not
// null, when there is none).
type ErrorInfo struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Details []ErrorDetail `json:"details"`
}

// ErrorBody is the JSON document of every error answer:
// {"error": {"code", "message", "details": [...]}}. Some answers add
// members next to "error" (a dry-run's plan beside its errors, what moved
// under a plan); Running is the one clients read by name: the execution
// that holds the stack or cluster, on a 409. Decoding ignores the others.
type ErrorBody struct {
	Error   ErrorInfo `json:"error"`
	Running string    `json:"running,omitempty"`
}
