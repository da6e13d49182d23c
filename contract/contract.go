// Package contract is what workflows and activities say to each other:
// activity names, error types, step-data kinds, and every activity's input
// and result. Workflows pass references (execution id, unit index, step
// id); the activities load the full steps from the store, so workflow
// history stays small whatever the size of the package.
//
// It is a leaf: it depends on nothing but the model, so the workflows (and
// whatever starts them) do not import the activities' providers, store or
// parsers.
package contract

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// Activity names, registered by the worker and used by the workflows.
const (
	PrepareName          = "Prepare"
	LoadUnitsName        = "LoadUnits"
	ApplyStepName        = "ApplyStep"
	ApplyBatchName       = "ApplyBatch"
	CompensateName       = "Compensate"
	WriteStackRecordName = "WriteStackRecord"
	StorePlanName        = "StorePlan"
	FetchPackageName     = "FetchPackage"
	RemoveStackName      = "RemoveStack"
	CheckPlanName        = "CheckPlan"
)

// Error types carried by application errors.
const (
	// ConfigErrorType marks errors that no retry can fix (invalid spec,
	// unresolvable expression, missing secret): the executor does not retry.
	ConfigErrorType = "ConfigError"
	// WrongNodeType marks a unit that reached a worker serving another
	// node (or the control plane's worker): it ran nothing, and no retry
	// on the same queue can fix it.
	WrongNodeType = "WrongNode"
	// StepFailedType marks a provider failure of one step.
	StepFailedType = "StepFailed"
	// FetchFailedType marks a failure to read a stack's URL that a retry
	// may fix (a 5xx answer, a network error).
	FetchFailedType = "FetchFailed"
	// WorkerStoppingType marks an activity its worker handed back because
	// it is stopping: Temporal retries it on another worker at once, and
	// it is never a step's failure nor counts against a step's retries.
	WorkerStoppingType = "WorkerStopping"
	// PlanMovedType marks an approved plan that no longer holds: the stack
	// or a resource it touches moved since it was made. Nothing was changed.
	PlanMovedType = "PlanMoved"
)

// ErrWorkerStopping is the cause of an activity's context cancelled
// because its worker stops: what it cut off runs again elsewhere.
var ErrWorkerStopping = errors.New("worker stopping")

// ErrLostOwnership is the cause of an activity's context cancelled
// because Temporal has acknowledged none of its heartbeats for nearly its
// heartbeat timeout (a partition between the worker and Temporal):
// Temporal times the attempt out and may start the next one elsewhere, so
// whatever the attempt still runs is killed at once and nothing more of
// it is recorded.
var ErrLostOwnership = errors.New("lost ownership of the attempt: no heartbeat acknowledged within its heartbeat timeout")

// Step data kinds kept in the store per (execution, step).
const (
	DataStep    = "step"    // the full step as prepared (storedStep JSON)
	DataUnit    = "unit"    // a batch unit's steps, keyed by UnitKey
	DataShard   = "shard"   // a shard's unit descriptors, keyed by ShardKey
	DataBefore  = "before"  // state read before a change (sealed by the store)
	DataOutputs = "outputs" // a step's outputs after it converged, with "id"
	DataPlan    = "plan"    // a dry-run's model.PlanStep per step
	// DataIndex lists every step in package order (without specs), under
	// step id IndexKey.
	DataIndex = "index"
	// DataPlanSummary holds a dry-run's model.Plan without its steps, under
	// step id PlanSummaryKey.
	DataPlanSummary = "plan-summary"
	// DataCompensated marks a step whose change was undone.
	DataCompensated = "compensated"
	// DataStarted marks a step whose effect started (stepdata.Started),
	// written just before a command that is not safe to repeat runs.
	DataStarted = "started"
	// DataNodeGrant holds, under the node's id, the NodeGrant of one agent
	// node in the execution.
	DataNodeGrant = "node-grant"
	// DataParams holds an execution's model.ApplyParams (JSON, sealed by
	// the store) under step id ParamsKey.
	DataParams = "params"
)

// ParamsKey is the step id of an execution's parameters.
const ParamsKey = ""

// ParamsExecution is the step data execution id under which the API keeps
// the parameters of an execution that has not started yet (ref is random);
// Prepare copies them to the execution, and
// retention deletes the record once its retention has passed (a retried
// execution reads it again meanwhile).
func ParamsExecution(ref string) string { return "params/" + ref }

// stackSecretsPrefix starts the step data execution id of a stack's
// secrets.
const stackSecretsPrefix = "stack-secrets/"

// StackSecretsExecution is the step data execution id under which a
// stack's secrets given with its applies are kept (a model.ApplyParams with
// Secrets only, under ParamsKey and DataParams, sealed by the store): a
// later apply without a secret reuses the stack's, a new value replaces
// it. Retention keeps the record; removing the stack deletes it.
func StackSecretsExecution(stackID string) string { return stackSecretsPrefix + stackID }

// IsStackRecord reports whether a step data execution id is a stack's
// record rather than an execution's.
func IsStackRecord(id string) bool { return strings.HasPrefix(id, stackSecretsPrefix) }

// NodeGrant is what the agent of one node may reach of an execution's step
// data through the server's agent API, written by the control plane when
// it prepares the execution: the records of its own steps and units, and
// the outputs of the steps its steps depend on.
type NodeGrant struct {
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	// Steps are the node's step ids: their step, before, outputs, plan
	// and compensated records (read and write, but step: read only).
	Steps []string `json:"steps"`
	// Units are the keys (UnitKey) of the node's multi-step units (read).
	Units []string `json:"units,omitempty"`
	// Deps are steps elsewhere that the node's steps depend on: their
	// outputs (read only), for expressions over them.
	Deps []string `json:"deps,omitempty"`
	// EnvRefs and Secrets are the env refs and secrets the node's steps
	// read by name (expr.Scan of their specs and conditions): of the
	// execution's parameters (DataParams), the agent API gives the node
	// these env ref values and secrets only, and every variable.
	EnvRefs []string `json:"envRefs,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
}

// PlanSummaryKey is the step id of the DataPlanSummary record; IndexKey of
// the DataIndex record.
const (
	PlanSummaryKey = "_"
	IndexKey       = "_"
)

// UnitKey is the step-data key of a batch unit's step list.
func UnitKey(index int) string { return fmt.Sprintf("unit:%d", index) }

// ShardKey is the step-data key of a shard's unit list, in one value (a
// shard without Pages).
func ShardKey(index int) string { return fmt.Sprintf("shard:%d", index) }

// ShardPageKey is the step-data key of page p of shard k's units.
func ShardPageKey(k, p int) string { return fmt.Sprintf("shard:%d:%d", k, p) }

// MaxUnitsPageBytes bounds the units one payload carries (a prepared
// plan's, one page of a shard's): far below the SDK's 512 KiB warning and
// Temporal's 2 MB limit, whatever the fleet. A unit's dependencies are the
// bulk of it: on 1,000 nodes one unit of fuel-library's release graph
// waits for up to 800 others.
const MaxUnitsPageBytes = 256 << 10

// DefaultParallelism is how many units an execution runs at once unless
// told otherwise: the one default of the API, the CLI, the workflows and
// the benchmark (see docs/performance.md for how it was chosen).
const DefaultParallelism = 10

// Mode says what an execution does with its steps.
type Mode string

const (
	ModeApply   Mode = "apply"
	ModeDryRun  Mode = "dry-run"
	ModeDestroy Mode = "destroy"
)

// PrepareInput names what to prepare. The package comes from the snapshot
// store by hash; the stack (for apply and destroy) gives the record and the
// previous snapshot. ClusterID is a claim: "" runs on the cluster the
// stack recorded, another one than it is refused while the stack has
// resources on its nodes.
type PrepareInput struct {
	ExecutionID  string `json:"executionId"`
	Mode         Mode   `json:"mode"`
	StackID      string `json:"stackId,omitempty"`
	SnapshotHash string `json:"snapshotHash,omitempty"`
	ClusterID    string `json:"clusterId,omitempty"`
	// BatchSize is the most steps one batch unit holds (0 = sized by the
	// mode, the plan's steps and Parallelism, see planner.UnitSize; 1 =
	// no batching). ShardUnits is the most units one workflow runs before
	// the plan is split into child workflows (0 = default 2000).
	// Parallelism is the units the execution runs at once (0 = default).
	BatchSize   int `json:"batchSize,omitempty"`
	ShardUnits  int `json:"shardUnits,omitempty"`
	Parallelism int `json:"parallelism,omitempty"`
	// Params names the execution's parameters in the store (see
	// ParamsExecution): the workflow carries the name, never the values.
	Params string `json:"params,omitempty"`
	// Only limits a stack's apply or dry-run to these resources
	// (planner.RecordKey) and what they depend on; nothing is deleted.
	// Empty: the whole package.
	Only []string `json:"only,omitempty"`
}

// Unit is one schedulable piece of a plan: a single step, or a batch of
// small independent steps of one kind on one node. It is what the executor
// sees; the steps themselves stay in the store.
type Unit struct {
	Index int `json:"i"`
	// Step is the step id of a single-step unit and the first step id of a
	// batch; Count is the number of steps (1 for a single step).
	Step  string `json:"s"`
	Count int    `json:"n"`
	// Steps are the ids of a multi-step unit's steps, in the order they
	// run, so progress can name each before the unit reports; left out
	// of plans too large to carry them all (see planner.MaxNamedSteps).
	Steps []string `json:"ids,omitempty"`
	Batch bool     `json:"b,omitempty"`
	Kind  string   `json:"k"`
	Node  string   `json:"node,omitempty"`
	// Deps are unit indexes that must succeed first; each AnyOf group is
	// satisfied by one succeeding member.
	Deps    []int      `json:"d,omitempty"`
	AnyOf   [][]int    `json:"a,omitempty"`
	Summary string     `json:"sum,omitempty"`
	Meta    model.Meta `json:"m,omitempty"`
	// Strategy caps how many units of the same Task (or, with Scope, of
	// the same group) run at once (0 = no cap).
	Strategy int    `json:"st,omitempty"`
	Task     string `json:"t,omitempty"`
	Scope    string `json:"sc,omitempty"`
	// ContinueOnError is Fuel's fail_on_error: false: a failure becomes skipped.
	ContinueOnError bool   `json:"coe,omitempty"`
	Group           string `json:"g,omitempty"`
	Delete          bool   `json:"del,omitempty"`
	// Subscriptions are the unit's steps that a change of steps in other
	// units refreshes: the executor, which knows every unit's results,
	// names the refreshed ones in UnitInput.Refresh. Subscriptions inside
	// the unit are settled by the activity.
	Subscriptions []Subscription `json:"sub,omitempty"`
	// Sources are the unit's steps whose change refreshes steps of other
	// units; a shard reports those that changed to the shards after it.
	Sources []string `json:"src,omitempty"`
	// Settled says why every step of the unit is skipped before it runs
	// (not selected, or a condition decided false when the execution was
	// prepared); the executor settles such a unit without an activity.
	Settled string `json:"set,omitempty"`
}

// ForActivity is the unit as its activity reads it — which steps, on which
// node — without what only the executor reads (dependencies, refresh
// wiring, the summary): on a fleet a unit may wait for hundreds of others,
// and every scheduled activity's input stays in history.
func (u Unit) ForActivity() Unit {
	u.Deps, u.AnyOf, u.Subscriptions, u.Sources, u.Summary = nil, nil, nil, nil, ""
	return u
}

// Subscription is a step refreshed when one of From changes in the run.
type Subscription struct {
	Step string    `json:"s"`
	From []StepRef `json:"f"`
}

// StepRef names a step and the unit holding it.
type StepRef struct {
	Unit int    `json:"u"`
	Step string `json:"s"`
}

// Shard is a contiguous range of units run by one child workflow (or, for
// a plan of one shard, by the workflow itself); its unit descriptors are in
// the store in Pages pages under ShardPageKey, each at most
// MaxUnitsPageBytes (no Pages: in one value under ShardKey(Index)).
type Shard struct {
	Index int `json:"index"`
	First int `json:"first"` // first global unit index
	Units int `json:"units"`
	Steps int `json:"steps"`
	Pages int `json:"pages,omitempty"`
}

// PreparedPlan is what Prepare returns: the units (or the shards holding
// them) and a few facts for the workflow's summary and report.
type PreparedPlan struct {
	Units  []Unit  `json:"units,omitempty"`
	Shards []Shard `json:"shards,omitempty"`
	Steps  int     `json:"steps"`
	// Deletes counts steps that remove resources which left the package.
	Deletes int `json:"deletes,omitempty"`
	// Summary is one line for the UI ("3 resources: 1 bucket, 1 dashboard, 1 label").
	Summary string `json:"summary"`
	// ClusterID is the cluster the run goes to: the input's, else the one
	// the stack recorded (see model.Stack.TargetCluster); "" for none.
	ClusterID string `json:"clusterId,omitempty"`
}

// LoadUnitsInput asks for a shard's units: page Page of a shard that has
// pages (Paged), else the whole shard.
type LoadUnitsInput struct {
	ExecutionID string `json:"executionId"`
	Shard       int    `json:"shard"`
	Page        int    `json:"page,omitempty"`
	Paged       bool   `json:"paged,omitempty"`
}

// UnitInput asks to converge (or plan, with Noop) one unit.
type UnitInput struct {
	ExecutionID string `json:"executionId"`
	// Cluster is the execution's cluster: with Unit.Node it names the
	// worker the unit is for, which refuses a unit meant for another.
	Cluster string `json:"cluster,omitempty"`
	Unit    Unit   `json:"unit"`
	Noop    bool   `json:"noop,omitempty"`
	// SkipGuards, with Noop, plans without running guard commands (an
	// exec's unless and onlyif): a dry-run that was not asked to run them.
	SkipGuards bool `json:"skipGuards,omitempty"`
	// Rerun marks an operator's retry of a unit that ran before.
	Rerun bool `json:"rerun,omitempty"`
	// Skip lists steps of the unit an operator chose to skip: the activity
	// reports them skipped and runs the rest of the unit.
	Skip []string `json:"skip,omitempty"`
	// Refresh lists steps of the unit a step in another unit refreshes
	// (it changed, or in a dry-run would): see Unit.Subscriptions.
	Refresh []string `json:"refresh,omitempty"`
	// HoldsUnknown says the executor pauses a step reported with outcome
	// unknown (model.OutcomeUnknown) for a decision. An executor of an
	// older build does not set it: such a step is then reported failed,
	// and not retried.
	HoldsUnknown bool `json:"holdsUnknown,omitempty"`
}

// StepResult is one step's own result. Changes values are truncated and
// secret-derived values redacted; the full before-state stays in the store.
type StepResult struct {
	StepID   string             `json:"id"`
	Action   model.Action       `json:"action,omitempty"`
	Outcome  model.Outcome      `json:"outcome,omitempty"`
	Changes  []model.AttrChange `json:"changes,omitempty"`
	Error    string             `json:"error,omitempty"`
	ObjectID string             `json:"objectId,omitempty"`
	// Blocked is the id of the step in the same unit whose failure kept
	// this one from running.
	Blocked string `json:"blocked,omitempty"`
	// Note is what a person should know of the step beyond its outcome:
	// that it has no byte-exact rollback (its before-state was over the
	// limit and not kept).
	Note string `json:"note,omitempty"`
	// MissingEnv and MissingSecrets name unresolved references (dry-run).
	MissingEnv     []string `json:"missingEnv,omitempty"`
	MissingSecrets []string `json:"missingSecrets,omitempty"`
	// Refreshed marks a step that reacted to a refresh (in a dry-run:
	// would).
	Refreshed bool `json:"refreshed,omitempty"`
}

// Notifies reports whether the step's result refreshes the steps that
// subscribe to it: it created or updated something, or in a plan (noop)
// would create, update or run. Unchanged, failed, skipped and deleted
// steps refresh nothing.
func (r StepResult) Notifies(noop bool) bool {
	if noop {
		switch r.Outcome {
		case model.OutcomeFailed, model.OutcomeSkipped:
			return false
		}
		switch r.Action {
		case model.ActionCreate, model.ActionUpdate, model.ActionRun:
			return true
		}
		return false
	}
	return r.Outcome == model.OutcomeCreated || r.Outcome == model.OutcomeUpdated
}

// Changed reports whether the step changed something that a compensation
// could undo.
func (r StepResult) Changed() bool {
	switch r.Outcome {
	case model.OutcomeCreated, model.OutcomeUpdated, model.OutcomeDeleted:
		return true
	}
	return r.Action == model.ActionRun && r.Outcome != model.OutcomeFailed && r.Outcome != model.OutcomeSkipped
}

// UnitResult is what ApplyStep and ApplyBatch return: each step's result
// and the activity attempt that produced them. A batch sends steps whose
// result is only an action and outcome in Groups, which keeps a 100-step
// result small in history; Expand turns them back into Steps.
type UnitResult struct {
	Steps   []StepResult  `json:"steps"`
	Groups  []ResultGroup `json:"groups,omitempty"`
	Attempt int           `json:"attempt,omitempty"`
}

// ResultGroup is the steps of a batch that share a plain result.
type ResultGroup struct {
	Action  model.Action  `json:"a"`
	Outcome model.Outcome `json:"o"`
	IDs     []string      `json:"ids"`
}

// Expand moves Groups into Steps.
func (r *UnitResult) Expand() {
	for _, g := range r.Groups {
		for _, id := range g.IDs {
			r.Steps = append(r.Steps, StepResult{StepID: id, Action: g.Action, Outcome: g.Outcome})
		}
	}
	r.Groups = nil
}

// Compact moves the plain results of Steps into Groups.
func (r *UnitResult) Compact() {
	kept := r.Steps[:0]
	index := map[[2]string]int{}
	for _, s := range r.Steps {
		if s.Error != "" || s.Note != "" || s.Blocked != "" || len(s.Changes) > 0 || s.ObjectID != "" || len(s.MissingEnv) > 0 || len(s.MissingSecrets) > 0 || s.Refreshed {
			kept = append(kept, s)
			continue
		}
		key := [2]string{string(s.Action), string(s.Outcome)}
		i, ok := index[key]
		if !ok {
			i = len(r.Groups)
			index[key] = i
			r.Groups = append(r.Groups, ResultGroup{Action: s.Action, Outcome: s.Outcome})
		}
		r.Groups[i].IDs = append(r.Groups[i].IDs, s.StepID)
	}
	r.Steps = kept
}

// FailureDetails ride on a failed ApplyStep's application error so the
// executor can report the attempt count.
type FailureDetails struct {
	StepID  string `json:"stepId"`
	Attempt int    `json:"attempt"`
	// NothingToUndo says the failed step left nothing to compensate: no
	// attempt recorded a before-state, or it is a command that did not
	// complete (whose undo is for a completed run). False, as from an
	// older worker, means it may have changed something.
	NothingToUndo bool `json:"nothingToUndo,omitempty"`
}

// CompensateInput asks to undo a unit's changes. StepIDs nil means every
// step of the unit that has a recorded before-state (an interrupted unit);
// steps without one changed nothing and are left alone.
type CompensateInput struct {
	ExecutionID string `json:"executionId"`
	// Cluster is the execution's cluster, as in UnitInput.
	Cluster string   `json:"cluster,omitempty"`
	Unit    Unit     `json:"unit"`
	StepIDs []string `json:"stepIds,omitempty"`
}

// CompensationResult is one step's compensation.
type CompensationResult struct {
	StepID       string `json:"id"`
	Error        string `json:"error,omitempty"`
	Irreversible bool   `json:"irreversible,omitempty"`
	// Undone is false when there was nothing to undo.
	Undone bool `json:"undone,omitempty"`
}

// CompensateResult lists each step's compensation.
type CompensateResult struct {
	Steps []CompensationResult `json:"steps"`
}

// WriteStackRecordInput asks to record the outcome of an apply or destroy.
// The activity reads which steps converged from the outputs kept in the
// store, so no step list crosses workflow history.
type WriteStackRecordInput struct {
	ExecutionID  string `json:"executionId"`
	StackID      string `json:"stackId"`
	SnapshotHash string `json:"snapshotHash,omitempty"`
	// ClusterID is the cluster the run went to (PreparedPlan.ClusterID),
	// recorded with the resources it left.
	ClusterID string `json:"clusterId,omitempty"`
	Destroy   bool   `json:"destroy,omitempty"`
	Changed   bool   `json:"changed"`
	// Partial says the run covered some of the stack's resources
	// (PrepareInput.Only): the others keep their entries.
	Partial bool `json:"partial,omitempty"`
}

// StackRecordResult is a compact account of the record written.
type StackRecordResult struct {
	Resources int        `json:"resources"`
	UpdatedAt model.Time `json:"updatedAt"`
}

// StorePlanInput is a dry-run's summary; the plan steps were stored by the
// step activities as they ran.
type StorePlanInput struct {
	ExecutionID    string        `json:"executionId"`
	Summary        model.Summary `json:"summary"`
	MissingEnvRefs []string      `json:"missingEnvRefs"`
	MissingSecrets []string      `json:"missingSecrets"`
}

// FetchPackageInput asks to read a stack's URLs into a package snapshot.
type FetchPackageInput struct {
	StackID string   `json:"stackId"`
	URLs    []string `json:"urls"`
	// AllowEmpty accepts a package without resources (a dry-run); an
	// apply of one would delete everything the stack holds.
	AllowEmpty bool `json:"allowEmpty,omitempty"`
}

// FetchPackageResult names the snapshot the URLs were stored as.
type FetchPackageResult struct {
	SnapshotHash string `json:"snapshotHash"`
	Resources    int    `json:"resources"`
}

// RemoveStackInput asks to remove a destroyed stack's record.
type RemoveStackInput struct {
	StackID string `json:"stackId"`
}

// RemoveStackResult says whether the record is gone; Remaining counts the
// resources that kept it.
type RemoveStackResult struct {
	Removed   bool `json:"removed"`
	Remaining int  `json:"remaining,omitempty"`
}

// CompensateOutput is a unit's compensation: each step's result and the
// new ids of the objects compensations recreated, by step id.
type CompensateOutput struct {
	CompensateResult
	Recreated map[string]string `json:"recreated,omitempty"`
}

// Activity names of graph executions, registered on the control plane.
const (
	PrepareGraphName    = "PrepareGraph"
	RecordGraphRunsName = "RecordGraphRuns"
)

// DataGraphTask is the step-data kind of a graph step's task record
// (graphTaskRecord): which task of which type it runs on which node, and the
// digest of the task's parameters, for node history.
const DataGraphTask = "graph-task"

// GraphRequest is a graph execution request, the one form it has from the
// HTTP body of POST /v1/clusters/{id}/executions to the activity that
// prepares it: graph types of a cluster, in order, each merged from its
// release, cluster and plugin layers, on all of the cluster's nodes or a
// subset, all of its tasks or a subset. The client sends the fields up to
// Events; the server fills the rest (a client sending them is refused):
// the cluster from the path, the pins of what it validated, and RetryOf
// when it retries an execution. It travels unchanged: the starter puts it
// in the workflow's input, the workflow in PrepareGraphInput, and a retry
// starts it again with only RetryOf grown.
type GraphRequest struct {
	// Type is one graph type; Types several, run one after the other. Give
	// one or the other; neither means the default type. Once the server
	// has validated the request only Types is set.
	Type  string   `json:"type,omitempty"`
	Types []string `json:"types,omitempty"`
	// Nodes and Tasks narrow the run: steps exist only on those nodes
	// (ids or names), and unlisted tasks are skipped with their edges kept.
	Nodes []string `json:"nodes,omitempty"`
	Tasks []string `json:"tasks,omitempty"`
	// DryRun only plans: the steps, where they run and in which order.
	DryRun bool `json:"dryRun,omitempty"`
	// Noop runs every step's noop version (Fuel's noop_run): read and
	// diff on the node, change nothing.
	Noop bool `json:"noop,omitempty"`
	// Force ignores node history: `changed` is true, `lastRun` is "", and
	// steps a retried execution completed run again.
	Force bool `json:"force,omitempty"`
	// OnFailure defaults to stop, as Fuel.
	OnFailure   model.OnFailure `json:"onFailure,omitempty"`
	Parallelism int             `json:"parallelism,omitempty"`
	// Events name what the execution is (Fuel's deploy_changes, or a
	// configuration resource such as nova_config). When there are any, a
	// task that already ran on a node with the same parameters is a noop
	// there unless its reexecute_on or refresh_on names one of them; a
	// node where it never ran (or ran with other parameters) runs it.
	Events []string `json:"events,omitempty"`

	// ClusterID is the cluster of the path (server-filled).
	ClusterID string `json:"clusterId,omitempty"`
	// Snapshots are the merged graphs the server validated, Types[i]'s as
	// a "graph" snapshot hash (server-filled).
	Snapshots []string `json:"snapshots,omitempty"`
	// Expansion is the hash of the "graph-steps" snapshot of the steps
	// the server expanded, every type's: the execution runs those
	// (server-filled).
	Expansion string `json:"expansion,omitempty"`
	// RetryOf lists the executions this one retries, most recent first; a
	// step one of them completed with the same parameters is a noop
	// (server-filled).
	RetryOf []string `json:"retryOf,omitempty"`
}

// ServerFields names the fields of r that only the server fills and that
// are set, by their JSON names.
func (r GraphRequest) ServerFields() []string {
	var out []string
	if r.ClusterID != "" {
		out = append(out, "clusterId")
	}
	if len(r.Snapshots) > 0 {
		out = append(out, "snapshots")
	}
	if r.Expansion != "" {
		out = append(out, "expansion")
	}
	if len(r.RetryOf) > 0 {
		out = append(out, "retryOf")
	}
	return out
}

// PrepareGraphInput asks to prepare a graph execution of a request the
// server validated and pinned.
type PrepareGraphInput struct {
	ExecutionID string       `json:"executionId"`
	Request     GraphRequest `json:"request"`
	BatchSize   int          `json:"batchSize,omitempty"`
	ShardUnits  int          `json:"shardUnits,omitempty"`
}

// PreparedGraph is a prepared graph execution.
type PreparedGraph struct {
	PreparedPlan
	// Snapshots are the merged graphs that run, one per type, kept in the
	// store so the execution can be inspected and repeated exactly.
	Snapshots []string `json:"snapshots"`
	// Tolerance gives each group task with a fault_tolerance the number of
	// its nodes that may fail before the execution fails.
	Tolerance map[string]int `json:"tolerance,omitempty"`
	// Done counts steps a retried execution already completed.
	Done int `json:"done,omitempty"`
	// Plan is a dry-run's plan (steps left out beyond maxResultPlanSteps;
	// ReadPlan has them all).
	Plan *model.Plan `json:"plan,omitempty"`
}

// RecordGraphRunsInput asks to record a graph execution's successful steps
// in node history.
type RecordGraphRunsInput struct {
	ExecutionID string `json:"executionId"`
	ClusterID   string `json:"clusterId"`
}

// RecordGraphRunsResult counts the runs recorded.
type RecordGraphRunsResult struct {
	Recorded int `json:"recorded"`
}

// CheckPlanInput asks whether an approved plan still holds: the stack's
// record must still be the one written by Base (the last execution when
// the plan was made, "" before the first), and, when Now is set, the plan
// made again (execution Now) must show every step as Planned did.
type CheckPlanInput struct {
	StackID string `json:"stackId"`
	Base    string `json:"base"`
	Planned string `json:"planned,omitempty"`
	Now     string `json:"now,omitempty"`
}

// CheckPlanResult says what moved since the plan, nothing when it holds.
// Base is the stack's last execution now. Moved lists at most
// MaxMovedSteps step ids, each with what changed ("file/a: planned update,
// now noop"); MovedCount counts them all.
type CheckPlanResult struct {
	Base       string   `json:"base"`
	MovedBy    string   `json:"movedBy,omitempty"`
	Moved      []string `json:"moved,omitempty"`
	MovedCount int      `json:"movedCount,omitempty"`
}

// MaxMovedSteps bounds the steps CheckPlanResult names.
const MaxMovedSteps = 20

// Holds reports whether nothing moved.
func (r CheckPlanResult) Holds() bool { return r.MovedBy == "" && r.MovedCount == 0 }

// String says what moved, in one line.
func (r CheckPlanResult) String() string {
	var parts []string
	if r.MovedBy != "" {
		parts = append(parts, "execution "+r.MovedBy+" was recorded on the stack since the plan")
	}
	if r.MovedCount > 0 {
		s := fmt.Sprintf("%d planned step(s) read differently now: %s", r.MovedCount, strings.Join(r.Moved, "; "))
		if r.MovedCount > len(r.Moved) {
			s += fmt.Sprintf("; and %d more", r.MovedCount-len(r.Moved))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "the plan holds"
	}
	return strings.Join(parts, "; ")
}
