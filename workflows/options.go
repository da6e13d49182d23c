package workflows

import (
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Defaults of an execution's knobs.
const (
	DefaultStepTimeout = 10 * time.Minute
	DefaultNodeWait    = 2 * time.Minute
	// DefaultHeartbeat is a unit's heartbeat timeout: every activity
	// heartbeats a third of it apart while it runs (a command included),
	// so a worker that dies is replaced within it.
	DefaultHeartbeat = 5 * time.Second
	// ControlHeartbeat is the heartbeat timeout of the control plane's
	// bookkeeping activities (prepare, record, plan), which heartbeat alike.
	ControlHeartbeat = 5 * time.Second
	// ShortUnitTimeout is the start-to-close timeout of a unit of short
	// steps only (files, directories, ordering), unless its meta says
	// otherwise: a hundred of them take well under a second.
	ShortUnitTimeout = 2 * time.Minute
	// maxUnitTimeout bounds a multi-step unit's start-to-close timeout.
	maxUnitTimeout = 24 * time.Hour
	// crashAttempts are attempts added to a step's own retry budget so a
	// worker that dies mid-step is replaced by a retry; the activity itself
	// makes provider failures non-retryable once the step's budget is spent.
	crashAttempts = 2
	// MaxParallelism bounds the units one execution runs at once, whatever
	// its input asks: each in flight holds workflow state and a worker slot.
	MaxParallelism = 1000
	// handoverAttempts are attempts added for workers that stop gracefully
	// and hand a unit back (contract.WorkerStoppingType): a rolling restart
	// hands a unit over once per server at most. The activity does not
	// count them against the step's own budget.
	handoverAttempts = 10
)

// shortKind reports whether steps of kind are quick local work.
func shortKind(kind string) bool {
	switch kind {
	case "file", "directory", "group", "stage", "skipped":
		return true
	}
	return false
}

// NodeTaskQueue is the task queue a node's worker polls: the server's own
// worker for local nodes, `cairn agent` for agent nodes. The name is
// "cairn-node-<len(cluster)>-<cluster>-<node>": the cluster's length in
// bytes comes first, so the name splits back into one (cluster, node) pair
// whatever characters the ids hold, and no two nodes share a queue (cluster
// "a" node "b-c" is cairn-node-1-a-b-c, cluster "a-b" node "c" is
// cairn-node-3-a-b-c). The name must not change between releases: a step
// of an open execution stays on the queue it was scheduled on (see
// docs/operating.md, Changing workflows; workflows/replay checks it).
func NodeTaskQueue(cluster, node string) string {
	return "cairn-node-" + strconv.Itoa(len(cluster)) + "-" + cluster + "-" + node
}

// IsControlPlane reports whether a step's node is the control plane.
func IsControlPlane(node string) bool { return node == "" || node == model.ControlPlane }

// ExecOptions steer one run of the executor.
type ExecOptions struct {
	ExecutionID string          `json:"executionId"`
	Mode        contract.Mode   `json:"mode"`
	OnFailure   model.OnFailure `json:"onFailure"`
	Parallelism int             `json:"parallelism,omitempty"`
	// ControlQueue serves control-plane steps; "" is the workflow's own queue.
	ControlQueue string `json:"controlQueue,omitempty"`
	Cluster      string `json:"cluster,omitempty"`
	// NodeWait bounds how long a step waits for its node's worker to pick
	// it up (schedule-to-start), so a node without an agent fails clearly.
	NodeWait time.Duration `json:"nodeWait,omitempty"`
	// StepTimeout is the default per-attempt timeout of a step.
	StepTimeout      time.Duration `json:"stepTimeout,omitempty"`
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
	// RollbackOnCancel compensates done changes when the execution is
	// cancelled (apply); otherwise cancellation only stops.
	RollbackOnCancel bool `json:"rollbackOnCancel,omitempty"`
	// Tolerance gives a group (Unit.Group) the number of its nodes whose
	// failure is tolerated (Fuel's fault_tolerance): within it a failed
	// step only fails its dependents and the execution goes on; past it
	// OnFailure applies.
	Tolerance map[string]int `json:"tolerance,omitempty"`
	// RunGuards has a dry-run run exec guard commands (unless, onlyif) to
	// decide its plan; by default a dry-run runs no command.
	RunGuards bool `json:"runGuards,omitempty"`
}

func (o ExecOptions) withDefaults(ctx workflow.Context) ExecOptions {
	if o.Parallelism <= 0 {
		o.Parallelism = contract.DefaultParallelism
	}
	o.Parallelism = min(o.Parallelism, MaxParallelism)
	if o.OnFailure == "" {
		o.OnFailure = model.OnFailureRollback
	}
	if o.ControlQueue == "" {
		o.ControlQueue = workflow.GetInfo(ctx).TaskQueueName
	}
	if o.NodeWait <= 0 {
		o.NodeWait = DefaultNodeWait
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = DefaultStepTimeout
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = DefaultHeartbeat
	}
	return o
}

func (o ExecOptions) queueFor(node string) string {
	if IsControlPlane(node) {
		return o.ControlQueue
	}
	return NodeTaskQueue(o.Cluster, node)
}

// stepActivityOptions turns a unit's meta params (mgmt's retry, delay,
// timeout) into the activity's retry policy and timeouts.
func (o ExecOptions) stepActivityOptions(u *contract.Unit) workflow.ActivityOptions {
	timeout := o.StepTimeout
	metaTimeout := false
	if d, err := time.ParseDuration(u.Meta.Timeout); err == nil && d > 0 {
		timeout, metaTimeout = d, true
	}
	switch {
	case shortKind(u.Kind) && !metaTimeout:
		timeout = min(timeout, ShortUnitTimeout)
	case u.Count > 1:
		// A unit runs its steps one after another at worst: each gets the
		// step timeout; the heartbeat tells a live unit from a dead worker.
		timeout = min(timeout*time.Duration(u.Count), maxUnitTimeout)
	}
	policy := &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        time.Minute,
		NonRetryableErrorTypes: []string{contract.ConfigErrorType},
	}
	if d, err := time.ParseDuration(u.Meta.Delay); err == nil && d > 0 {
		policy.InitialInterval = d
		policy.BackoffCoefficient = 1 // mgmt's delay is a fixed pause between attempts
		policy.MaximumInterval = d
	}
	switch {
	case u.Meta.Retry < 0:
		policy.MaximumAttempts = 0 // forever
	default:
		policy.MaximumAttempts = int32(u.Meta.Retry + 1 + crashAttempts + handoverAttempts)
	}
	ao := workflow.ActivityOptions{
		TaskQueue:           o.queueFor(u.Node),
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    o.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         policy,
		Summary:             u.Summary,
	}
	if !IsControlPlane(u.Node) {
		ao.ScheduleToStartTimeout = o.NodeWait
	}
	return ao
}

// compensationOptions run a unit's compensation where the unit ran.
func (o ExecOptions) compensationOptions(u *contract.Unit) workflow.ActivityOptions {
	ao := workflow.ActivityOptions{
		TaskQueue:           o.queueFor(u.Node),
		StartToCloseTimeout: o.StepTimeout,
		HeartbeatTimeout:    o.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumAttempts:        3 + handoverAttempts,
			NonRetryableErrorTypes: []string{contract.ConfigErrorType},
		},
		Summary: "undo " + u.Summary,
	}
	if !IsControlPlane(u.Node) {
		ao.ScheduleToStartTimeout = o.NodeWait
	}
	return ao
}

// RecordRetryInterval caps the pause between two attempts of the stack
// record's write: a store that comes back is written to within it.
const RecordRetryInterval = 30 * time.Second

// recordOptions are the stack record write's: idempotent per execution,
// retried with a backoff capped at RecordRetryInterval and no limit on
// attempts or total time, so a store that is down for a while delays the
// record instead of losing it.
func recordOptions(queue, summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    ControlHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        RecordRetryInterval,
			MaximumAttempts:        0, // until it lands
			NonRetryableErrorTypes: []string{contract.ConfigErrorType},
		},
		Summary: summary,
	}
}

// controlOptions are for the bookkeeping activities (prepare, plan):
// timeout bounds one attempt; the heartbeat notices a lost worker within
// ControlHeartbeat.
func controlOptions(queue, summary string, timeout time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    ControlHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumAttempts:        5 + handoverAttempts,
			NonRetryableErrorTypes: []string{contract.ConfigErrorType},
		},
		Summary: summary,
	}
}
