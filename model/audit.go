package model

// AuditEntry is one change made (or refused) through the API: who, when,
// which route, on what, and how it ended. It never holds a body, a secret
// or a token.
type AuditEntry struct {
	ID int64 `json:"id"`
	At Time  `json:"at"`
	// Principal is who acted ("" when the request carried no valid token).
	Principal string `json:"principal"`
	Method    string `json:"method"`
	// Route is the route's pattern ("/v1/stacks/:id/apply"), Path the
	// request's path.
	Route string `json:"route"`
	Path  string `json:"path"`
	// The target, as far as the route names it.
	Stack     string `json:"stack,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
	Release   string `json:"release,omitempty"`
	Execution string `json:"execution,omitempty"`
	// Status is the answer's HTTP status, Code its error code ("" on
	// success).
	Status    int    `json:"status"`
	Code      string `json:"code,omitempty"`
	RequestID string `json:"requestId"`
}

// AuditFilter selects audit entries: every non-empty field must match;
// entries are listed newest first, before Before (an entry id, 0: from the
// newest), at most Limit.
type AuditFilter struct {
	Principal string
	Stack     string
	Cluster   string
	Execution string
	Since     Time
	Before    int64
	Limit     int
}

// AuditList answers GET /v1/audit; Next, when set, is the ?before= of the
// next page.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
	Next    int64        `json:"next,omitempty"`
}
