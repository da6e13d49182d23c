package model

// DefaultGraphType is the type of a graph uploaded without one (Fuel).
const DefaultGraphType = "default"

// Layer is where a typed graph is stored. Layers merge in this order; a
// later layer is of more importance and overrides earlier ones by task id.
type Layer string

const (
	LayerRelease Layer = "release"
	LayerCluster Layer = "cluster"
	LayerPlugin  Layer = "plugin"
)

// Graph is a typed set of tasks (Fuel shape).
type Graph struct {
	Name  string  `json:"name,omitempty" yaml:"name,omitempty"`
	Type  string  `json:"type" yaml:"type"`
	Tasks []*Task `json:"tasks" yaml:"tasks"`
}

// Task types with structural meaning.
const (
	TaskGroup   = "group"
	TaskStage   = "stage"
	TaskSkipped = "skipped"
)

// Task is one Fuel deployment task. Fields Cairn interprets are typed; every
// other field the document carried is kept in Extra so nothing is dropped.
type Task struct {
	ID              string     `json:"id" yaml:"id"`
	Type            string     `json:"type" yaml:"type"`
	Version         string     `json:"version,omitempty" yaml:"version,omitempty"`
	Roles           []string   `json:"roles,omitempty" yaml:"roles,omitempty"`
	Groups          []string   `json:"groups,omitempty" yaml:"groups,omitempty"`
	Tasks           []string   `json:"tasks,omitempty" yaml:"tasks,omitempty"` // members of a group task
	Requires        []string   `json:"requires,omitempty" yaml:"requires,omitempty"`
	RequiredFor     []string   `json:"required_for,omitempty" yaml:"required_for,omitempty"`
	CrossDepends    []CrossDep `json:"cross_depends,omitempty" yaml:"cross_depends,omitempty"`
	CrossDependedBy []CrossDep `json:"cross_depended_by,omitempty" yaml:"cross_depended_by,omitempty"`
	// CrossDependsYAQL and CrossDependedByYAQL are cross dependencies
	// written {yaql_exp: "…"}: evaluated per node when the graph is
	// expanded for an execution, to a list of {name, role, policy}.
	CrossDependsYAQL    string         `json:"cross_depends_yaql,omitempty" yaml:"cross_depends_yaql,omitempty"`
	CrossDependedByYAQL string         `json:"cross_depended_by_yaql,omitempty" yaml:"cross_depended_by_yaql,omitempty"`
	Condition           string         `json:"condition,omitempty" yaml:"condition,omitempty"`
	FailOnError         *bool          `json:"fail_on_error,omitempty" yaml:"fail_on_error,omitempty"`
	Strategy            *Strategy      `json:"strategy,omitempty" yaml:"strategy,omitempty"`
	FaultTolerance      string         `json:"fault_tolerance,omitempty" yaml:"fault_tolerance,omitempty"` // group tasks: "2", "-1", "30%"
	Parameters          map[string]any `json:"parameters,omitempty" yaml:"parameters,omitempty"`
	Meta                Meta           `json:"meta,omitempty" yaml:"meta,omitempty"`
	Extra               map[string]any `json:"-" yaml:"-"`
	// Nulls lists the top-level fields the document set to an explicit
	// null, which a layer merge treats as "remove this field". Explicit
	// nulls inside Parameters stay as nil values in the map.
	Nulls []string `json:"-" yaml:"-"`
	// Layer and Owner say where the task came from after a merge.
	Layer Layer    `json:"-" yaml:"-"`
	Owner string   `json:"-" yaml:"-"`
	Pos   Position `json:"-" yaml:"-"`
}

// CrossDep links a task to a task on other nodes. Name and Role may be
// "/regex/"; Policy is "all" (default) or "any".
type CrossDep struct {
	Name   string `json:"name" yaml:"name"`
	Role   any    `json:"role,omitempty" yaml:"role,omitempty"` // string or []string
	Policy string `json:"policy,omitempty" yaml:"policy,omitempty"`
}

// Strategy caps how many copies of a task run across nodes at once.
type Strategy struct {
	Type   string `json:"type" yaml:"type"` // parallel (default) | one_by_one
	Amount int    `json:"amount,omitempty" yaml:"amount,omitempty"`
	// AmountYAQL is an amount written {yaql_exp: "…"}, evaluated per node
	// when the graph runs (Amount is 0 then).
	AmountYAQL string `json:"amountYaql,omitempty" yaml:"amountYaql,omitempty"`
}

// Limit is the number of concurrent copies allowed; 0 means unlimited.
func (s *Strategy) Limit() int {
	switch {
	case s == nil:
		return 0
	case s.Type == "one_by_one":
		return 1
	default:
		return s.Amount
	}
}

// StoredGraph is one owner's graph of one type, as kept by the store: the
// source exactly as uploaded and its parsed form.
type StoredGraph struct {
	Layer       Layer  `json:"layer"`
	OwnerID     string `json:"ownerId"`
	Type        string `json:"type"`
	Name        string `json:"name,omitempty"`
	Source      []byte `json:"-"`
	ContentType string `json:"contentType,omitempty"`
	Graph       *Graph `json:"graph"`
	UpdatedAt   Time   `json:"updatedAt"`
}
