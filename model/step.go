package model

// Step is one vertex of an execution: a resource or a task expanded onto one
// node. graphs builds steps; the executor runs them. A step is small and
// JSON-friendly so the executor can persist large step lists in the store
// and pass only ids through workflow history.
type Step struct {
	// ID is unique in the execution: "kind/name" for package resources
	// (with "@node" when targeted at nodes), "task@node" for graph tasks.
	ID   string `json:"id"`
	Kind string `json:"kind"` // catalogue kind (lower case), e.g. "file", "exec"
	Name string `json:"name"` // metadata.name or task id
	// RecordKind is the kind as written in the package, kept for the stack
	// record (pkger shows "Label", not "label").
	RecordKind string `json:"recordKind,omitempty"`
	Node       string `json:"node,omitempty"` // "" = control plane
	Spec       Spec   `json:"spec,omitempty"`
	// Deps are step ids that must succeed first; AnyOf groups are satisfied
	// when one member succeeds (Fuel cross_depends policy any).
	Deps  []string   `json:"deps,omitempty"`
	AnyOf [][]string `json:"anyOf,omitempty"`
	// Subscribes are step ids (all among Deps) whose change in this run
	// refreshes this step: notify, subscribe and notifying auto-edges.
	Subscribes []string `json:"subscribes,omitempty"`
	// Delete marks a step that removes a resource which left the package.
	Delete bool `json:"delete,omitempty"`
	// ID of the existing object from the stack record (http object id).
	ObjectID     string `json:"objectId,omitempty"`
	Associations []Ref  `json:"associations,omitempty"`
	Meta         Meta   `json:"meta,omitempty"`
	// Fuel run-time semantics.
	Condition   string `json:"condition,omitempty"`
	FailOnError *bool  `json:"failOnError,omitempty"`
	Strategy    int    `json:"strategy,omitempty"` // max steps sharing its cap at once; 0 = no cap
	Task        string `json:"task,omitempty"`     // task id shared by the copies of a task
	// StrategyScope names the steps that share the Strategy cap: empty
	// for the copies of one task (the task's own strategy), the group id
	// for a member that takes its group's strategy (Fuel: a one_by_one
	// group deploys its nodes one at a time, whichever member runs).
	StrategyScope string `json:"strategyScope,omitempty"`
	Skipped       bool   `json:"skipped,omitempty"` // not selected: runs as a no-op, edges kept
	Group         string `json:"group,omitempty"`   // group task this step belongs to (fault tolerance)
	// TestPre and TestPost are the task's Fuel lifecycle checks, run on
	// the step's node around its change.
	TestPre  *TaskCheck `json:"testPre,omitempty"`
	TestPost *TaskCheck `json:"testPost,omitempty"`
}

// FailsOnError reports fail_on_error, which defaults to true.
func (s *Step) FailsOnError() bool { return s.FailOnError == nil || *s.FailOnError }
