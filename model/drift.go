package model

// DriftSettings is what a stack's drift schedule is asked to do (the body
// of PUT /v1/stacks/{id}/drift). Every is a Go duration ("10m"); Overlap
// is Temporal's overlap policy in lower case ("skip" by default,
// "buffer_one", "buffer_all", "cancel_other", "terminate_other",
// "allow_all").
type DriftSettings struct {
	Every   string `json:"every"`
	Repair  bool   `json:"repair"`
	Paused  bool   `json:"paused"`
	Overlap string `json:"overlap,omitempty"`
	// Watch has the server watch the stack's files and directories on
	// its own nodes (inotify) and check, and with Repair repair, the
	// resources that changed within about a second of the change; the
	// schedule keeps checking the whole stack.
	Watch bool `json:"watch,omitempty"`
}

// DriftPatch changes some of a drift schedule's settings (PATCH); absent
// fields stay as they are.
type DriftPatch struct {
	Every   *string `json:"every,omitempty"`
	Repair  *bool   `json:"repair,omitempty"`
	Paused  *bool   `json:"paused,omitempty"`
	Overlap *string `json:"overlap,omitempty"`
	Watch   *bool   `json:"watch,omitempty"`
}

// Drift is a stack's drift schedule as Temporal keeps it, with the last
// check Cairn recorded (GET /v1/stacks/{id}/drift).
type Drift struct {
	StackID    string `json:"stackId"`
	ScheduleID string `json:"scheduleId"`
	DriftSettings
	// NextCheckAt is when the schedule runs next (absent while paused).
	NextCheckAt *Time       `json:"nextCheckAt,omitempty"`
	LastCheck   *DriftCheck `json:"lastCheck,omitempty"`
}

// DriftCheck is one drift check's result: a dry-run of the package the
// stack last applied, against what is there now.
type DriftCheck struct {
	// ExecutionID is the check's; PlanExecutionID the dry-run's, whose plan
	// GET /v1/executions/{id} shows in full.
	ExecutionID     string `json:"executionId"`
	PlanExecutionID string `json:"planExecutionId,omitempty"`
	CheckedAt       Time   `json:"checkedAt"`
	Drifted         bool   `json:"drifted"`
	// Resources are the steps the dry-run would change, with their diffs
	// (secrets redacted as in any plan).
	Resources []PlanStep `json:"resources"`
	// Error says why the check could not tell (no applied package, a
	// failed dry-run).
	Error  string       `json:"error,omitempty"`
	Repair *DriftRepair `json:"repair,omitempty"`
}

// Repair outcomes of a drift check.
const (
	RepairApplied = "applied" // the apply ran and completed
	RepairFailed  = "failed"  // the apply ran and failed
	RepairSkipped = "skipped" // another apply or destroy held the stack, or one landed since the check
)

// DriftRepair is what a drift check with repair on did about the drift.
type DriftRepair struct {
	Status      string `json:"status"`
	ExecutionID string `json:"executionId,omitempty"`
	Reason      string `json:"reason,omitempty"`
}
