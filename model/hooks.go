package model

// Webhook event types.
const (
	EventExecutionCompleted = "execution.completed"
	EventExecutionFailed    = "execution.failed"
	EventDriftDetected      = "drift.detected"
)

// HookEvents lists every event type a hook may ask for.
var HookEvents = []string{EventExecutionCompleted, EventExecutionFailed, EventDriftDetected}

// Hook is one webhook of a stack: matching events are POSTed to URL as
// JSON, signed with Secret (see README "Webhooks"). DryRuns adds the
// execution events of the stack's dry-runs.
type Hook struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Events  []string `json:"events"`
	DryRuns bool     `json:"dryRuns,omitempty"`
	Secret  string   `json:"secret,omitempty"`
}

// Wants reports whether the hook asks for an event of type typ; dryRun
// says the event is a dry-run's.
func (h Hook) Wants(typ string, dryRun bool) bool {
	if dryRun && !h.DryRuns {
		return false
	}
	for _, e := range h.Events {
		if e == typ {
			return true
		}
	}
	return false
}

// HookView is a hook as the API shows it: the secret never, only its
// fingerprint (the first 16 hex digits of its SHA-256).
type HookView struct {
	ID                string   `json:"id"`
	URL               string   `json:"url"`
	Events            []string `json:"events"`
	DryRuns           bool     `json:"dryRuns,omitempty"`
	SecretFingerprint string   `json:"secretFingerprint,omitempty"`
}

// HookEvent is the JSON body POSTed to a hook.
type HookEvent struct {
	// ID is unique per event: receivers drop a delivery they saw before.
	ID          string        `json:"id"`
	Type        string        `json:"type"`
	StackID     string        `json:"stackId"`
	ExecutionID string        `json:"executionId"`
	Kind        ExecutionKind `json:"kind"`
	Status      string        `json:"status,omitempty"`
	Error       string        `json:"error,omitempty"`
	At          Time          `json:"at"`
	// Drifted names the drifted resources of a drift.detected event (their
	// diffs are in GET /v1/stacks/{id}/drift).
	Drifted []string `json:"drifted,omitempty"`
}

// Hooks is the body of PUT /v1/stacks/{id}/hooks: a stack's whole list.
type Hooks struct {
	Hooks []Hook `json:"hooks"`
}

// HookViews is how the hooks routes answer: secrets by fingerprint only.
type HookViews struct {
	Hooks []HookView `json:"hooks"`
}
