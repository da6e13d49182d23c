package dag

// State is where a vertex stands in a Scheduler's run. A vertex moves
//
//	Pending → Ready → Running → Succeeded | Skipped | Failed | Held
//	Pending → UpstreamFailed
//	Held → Ready (Retry) | Skipped (Skip) | Failed (Abandon)
//
// and Succeeded, Skipped, Failed and UpstreamFailed are final.
type State uint8

const (
	// Pending waits for its dependencies.
	Pending State = iota
	// Ready has its dependencies satisfied and waits for a slot.
	Ready
	// Running was handed out by Next and has not reported yet.
	Running
	// Succeeded ran and succeeded.
	Succeeded
	// Skipped ended without failing: dependents take it as a success.
	Skipped
	// Failed ran and failed (or was abandoned): dependents that need it
	// are upstream-failed.
	Failed
	// UpstreamFailed never ran: a dependency it needed failed or was itself
	// upstream-failed.
	UpstreamFailed
	// Held failed and waits for a decision; its dependents are neither
	// released nor failed until then.
	Held
)

var stateNames = [...]string{
	Pending: "pending", Ready: "ready", Running: "running", Succeeded: "succeeded",
	Skipped: "skipped", Failed: "failed", UpstreamFailed: "upstream-failed", Held: "held",
}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Final reports whether nothing moves a vertex out of s again.
func (s State) Final() bool {
	switch s {
	case Succeeded, Skipped, Failed, UpstreamFailed:
		return true
	}
	return false
}

// Satisfies reports whether a vertex in s counts as a success for its
// dependents: Succeeded or Skipped.
func (s State) Satisfies() bool { return s == Succeeded || s == Skipped }
