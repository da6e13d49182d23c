package model

// Action is what a step does (or would do, in a plan).
type Action string

const (
	ActionCreate Action = "create"
	ActionUpdate Action = "update"
	ActionDelete Action = "delete"
	ActionRun    Action = "run" // exec and Fuel tasks: runs, has no stored state
	ActionNoop   Action = "noop"
)

// Status is a step's state in an execution.
type Status string

const (
	StatusPending    Status = "pending"
	StatusRunning    Status = "running"
	StatusWaiting    Status = "waiting" // paused for an operator decision
	StatusSucceeded  Status = "succeeded"
	StatusFailed     Status = "failed"
	StatusSkipped    Status = "skipped"
	StatusDepFailed  Status = "dep_failed"
	StatusRolledBack Status = "rolled_back"
	StatusCanceled   Status = "canceled"
	// StatusUnknown is a step whose effect may or may not have happened:
	// it started, its worker died before its outcome was recorded, and
	// running it again is not known to be safe. It waits for a decision.
	StatusUnknown Status = "unknown"
)

// Outcome is a Puppet-style result class of one resource.
type Outcome string

const (
	OutcomeCreated   Outcome = "created"
	OutcomeUpdated   Outcome = "updated"
	OutcomeDeleted   Outcome = "deleted"
	OutcomeUnchanged Outcome = "unchanged"
	OutcomeFailed    Outcome = "failed"
	OutcomeSkipped   Outcome = "skipped"
	// OutcomeUnknown: the step's command may or may not have run (see
	// StatusUnknown).
	OutcomeUnknown Outcome = "unknown"
)

// UnknownMessage is what a step whose outcome is unknown says.
const UnknownMessage = "unknown: the command may or may not have run (its worker stopped after starting it and before recording its outcome)"

// AttrChange is one attribute's old and new value.
type AttrChange struct {
	Path string `json:"path" yaml:"path"`
	Old  any    `json:"old,omitempty" yaml:"old,omitempty"`
	New  any    `json:"new,omitempty" yaml:"new,omitempty"`
}

// OutputChange is the path of the change that carries what a step's
// program printed (an external program's actions): New is the text,
// bounded and redacted.
const OutputChange = "output"

// PlanStep is one step of a plan.
type PlanStep struct {
	ID      string       `json:"id" yaml:"id"` // "kind/name" or "task@node"
	Kind    string       `json:"kind" yaml:"kind"`
	Name    string       `json:"name" yaml:"name"`
	Node    string       `json:"node,omitempty" yaml:"node,omitempty"`
	Action  Action       `json:"action" yaml:"action"`
	Changes []AttrChange `json:"changes,omitempty" yaml:"changes,omitempty"`
	Old     any          `json:"old,omitempty" yaml:"old,omitempty"`
	New     any          `json:"new,omitempty" yaml:"new,omitempty"`
	Error   string       `json:"error,omitempty" yaml:"error,omitempty"`
	// Note is what a person should know of the step beyond its action:
	// that an apply would not keep its before-state (over the limit), so
	// its rollback could not restore the previous state.
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
	// Refresh marks a step a resource it subscribes to would refresh:
	// it would change, and this step's kind reacts (an exec runs).
	Refresh bool `json:"refresh,omitempty" yaml:"refresh,omitempty"`
}

// Summary counts the steps of a plan by action.
type Summary struct {
	Create int `json:"create" yaml:"create"`
	Update int `json:"update" yaml:"update"`
	Delete int `json:"delete" yaml:"delete"`
	Run    int `json:"run" yaml:"run"`
	Noop   int `json:"noop" yaml:"noop"`
	// Refresh counts the steps that would be refreshed; each is counted
	// by its action too.
	Refresh int `json:"refresh" yaml:"refresh"`
}

// Add counts one action.
func (s *Summary) Add(a Action) {
	switch a {
	case ActionCreate:
		s.Create++
	case ActionUpdate:
		s.Update++
	case ActionDelete:
		s.Delete++
	case ActionRun:
		s.Run++
	default:
		s.Noop++
	}
}

// Changes reports whether applying the plan would change anything.
func (s Summary) Changes() bool { return s.Create+s.Update+s.Delete+s.Run > 0 }

// Plan is a dry-run's answer: what would change and what is missing.
type Plan struct {
	Summary        Summary    `json:"summary" yaml:"summary"`
	Steps          []PlanStep `json:"steps" yaml:"steps"`
	MissingEnvRefs []string   `json:"missingEnvRefs" yaml:"missingEnvRefs"`
	MissingSecrets []string   `json:"missingSecrets" yaml:"missingSecrets"`
}

// Report is the Puppet-style account of a finished execution.
type Report struct {
	Created   int `json:"created" yaml:"created"`
	Updated   int `json:"updated" yaml:"updated"`
	Deleted   int `json:"deleted" yaml:"deleted"`
	Unchanged int `json:"unchanged" yaml:"unchanged"`
	Failed    int `json:"failed" yaml:"failed"`
	Skipped   int `json:"skipped" yaml:"skipped"`
	// Unknown counts the steps whose outcome stayed unknown (the run
	// ended without a decision to run them again or take them as done);
	// each is also among the failures.
	Unknown int `json:"unknown,omitempty" yaml:"unknown,omitempty"`
	// Refreshed counts the steps that were refreshed (a resource they
	// subscribe to changed) and reacted; each is counted by its outcome
	// too (an exec that ran is updated).
	Refreshed int `json:"refreshed" yaml:"refreshed"`
	// Failures names each failed step with its error; CompensationFailures
	// each compensation that itself failed during a rollback.
	Failures             []StepError `json:"failures,omitempty" yaml:"failures,omitempty"`
	CompensationFailures []StepError `json:"compensationFailures,omitempty" yaml:"compensationFailures,omitempty"`
	RolledBack           bool        `json:"rolledBack,omitempty" yaml:"rolledBack,omitempty"`
	// Log counts the messages of the steps' logs by level (StepLog);
	// each step's own messages are in its result.
	Log map[LogLevel]int `json:"log,omitempty" yaml:"log,omitempty"`
}

// Count adds one outcome.
func (r *Report) Count(o Outcome) {
	switch o {
	case OutcomeCreated:
		r.Created++
	case OutcomeUpdated:
		r.Updated++
	case OutcomeDeleted:
		r.Deleted++
	case OutcomeUnchanged:
		r.Unchanged++
	case OutcomeFailed:
		r.Failed++
	case OutcomeSkipped:
		r.Skipped++
	case OutcomeUnknown:
		r.Unknown++
	}
}

// Changed reports whether anything was created, updated or deleted.
func (r Report) Changed() bool { return r.Created+r.Updated+r.Deleted > 0 }

// StepError names a step and what went wrong with it.
type StepError struct {
	Step  string `json:"step" yaml:"step"`
	Error string `json:"error" yaml:"error"`
}
