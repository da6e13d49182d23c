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
// members next to "error" (a dry-run's plan beside its errors); those
// clients read by name are here: on a 409, Running is the execution that
// holds the stack or cluster, and MovedBy, Moved and MovedCount say what
// moved under a plan that was to be approved (the stack's execution
// recorded since, the steps whose plan changed, at most a few of them, and
// how many in all). Decoding ignores the others.
type ErrorBody struct {
	Error      ErrorInfo `json:"error"`
	Running    string    `json:"running,omitempty"`
	MovedBy    string    `json:"movedBy,omitempty"`
	Moved      []string  `json:"moved,omitempty"`
	MovedCount int       `json:"movedCount,omitempty"`
}
