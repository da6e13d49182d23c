package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Workflow ids. An apply or destroy of a stack holds the id
// StackWorkflowID (one at a time per stack); a graph execution of a
// cluster holds GraphWorkflowID (one at a time per cluster); dry-runs take
// no lock and carry a unique nonce. Every workflow checks, before it runs
// anything, that its id is the one its input calls for, so an execution
// started under another id cannot slip past a lock or run as another.
const (
	stackIDPrefix       = "stack-"
	dryRunIDPrefix      = "dryrun-"
	graphIDPrefix       = "graph-"
	graphDryRunIDPrefix = "graph-dryrun-"
)

// UntrustedInputType marks the failure of an execution whose id, queue or
// input does not agree with what Cairn starts: it runs nothing.
const UntrustedInputType = "UntrustedInput"

// StackWorkflowID is the id of a stack's apply or destroy: the stack's lock.
func StackWorkflowID(stackID string) string { return stackIDPrefix + stackID }

// DryRunWorkflowID is the id of a dry-run of a stack; nonce is a UUID.
func DryRunWorkflowID(stackID, nonce string) string { return dryRunIDPrefix + stackID + "-" + nonce }

// GraphWorkflowID is the id of a graph execution of a cluster: the
// cluster's lock.
func GraphWorkflowID(clusterID string) string { return graphIDPrefix + clusterID }

// GraphDryRunWorkflowID is the id of a graph dry run; nonce is a UUID.
func GraphDryRunWorkflowID(clusterID, nonce string) string {
	return graphDryRunIDPrefix + clusterID + "-" + nonce
}

// IsExecutionWorkflowID reports whether id has the shape Cairn gives the
// workflows of type workflowType; false for any other type.
func IsExecutionWorkflowID(workflowType, id string) bool {
	switch workflowType {
	case "ApplyWorkflow", "DestroyWorkflow":
		return len(id) > len(stackIDPrefix) && strings.HasPrefix(id, stackIDPrefix)
	case "DryRunWorkflow":
		return len(id) > len(dryRunIDPrefix) && strings.HasPrefix(id, dryRunIDPrefix) && hasNonce(id)
	case "GraphExecutionWorkflow":
		return len(id) > len(graphIDPrefix) && strings.HasPrefix(id, graphIDPrefix)
	case "DriftCheckWorkflow":
		return len(id) > len(contract.DriftIDPrefix) && strings.HasPrefix(id, contract.DriftIDPrefix)
	}
	return false
}

// hasNonce reports whether id ends in "-" and a UUID (8-4-4-4-12 hex).
func hasNonce(id string) bool {
	const n = 36
	if len(id) < n+1 || id[len(id)-n-1] != '-' {
		return false
	}
	for i, r := range id[len(id)-n:] {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}

// untrusted is the failure of an execution that refuses to run.
func untrusted(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), UntrustedInputType, nil)
}

// checkStackRun refuses an apply or destroy of stackID whose workflow id
// is not the stack's lock id, or whose settings name another execution or
// queue.
func checkStackRun(ctx workflow.Context, s Settings, stackID string) error {
	info := workflow.GetInfo(ctx)
	if stackID == "" {
		return untrusted("no stack id in the input")
	}
	if want := StackWorkflowID(stackID); info.WorkflowExecution.ID != want {
		return untrusted("workflow id %q is not %q, the id of stack %s's executions", info.WorkflowExecution.ID, want, stackID)
	}
	return checkSettings(ctx, s)
}

// checkDryRun refuses a dry-run of stackID whose workflow id is not one
// the starter gives its dry-runs.
func checkDryRun(ctx workflow.Context, s Settings, stackID string) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if stackID == "" {
		return untrusted("no stack id in the input")
	}
	if !isDryRunID(stackID, id) {
		return untrusted("workflow id %q is not the id of a dry-run of stack %s (%s-<uuid>)", id, stackID, dryRunIDPrefix+stackID)
	}
	return checkSettings(ctx, s)
}

// isDryRunID reports whether id is one the starter gives stackID's
// dry-runs.
func isDryRunID(stackID, id string) bool {
	prefix := dryRunIDPrefix + stackID
	return strings.HasPrefix(id, prefix) && len(id) == len(prefix)+37 && hasNonce(id)
}

// isDriftCheckID reports whether id is one stackID's drift schedule gives
// its checks: contract.DriftScheduleID, "-" and an RFC 3339 time.
func isDriftCheckID(stackID, id string) bool {
	prefix := contract.DriftScheduleID(stackID) + "-"
	if !strings.HasPrefix(id, prefix) {
		return false
	}
	_, err := time.Parse(time.RFC3339, id[len(prefix):])
	return err == nil
}

// checkHookDelivery refuses a delivery of ev that is not the child of an
// execution of ev's stack (Temporal, not the input, names the parent) under
// the id HookDeliveryWorkflowID, or whose event names another execution.
func checkHookDelivery(ctx workflow.Context, ev model.HookEvent) error {
	info := workflow.GetInfo(ctx)
	if ev.StackID == "" {
		return untrusted("no stack id in the event")
	}
	parent := info.ParentWorkflowExecution
	if parent == nil {
		return untrusted("a hook delivery runs only as the child of an execution of its stack")
	}
	if p := parent.ID; p != StackWorkflowID(ev.StackID) && !isDryRunID(ev.StackID, p) && !isDriftCheckID(ev.StackID, p) {
		return untrusted("parent %q is not an execution of stack %s", p, ev.StackID)
	}
	// An execution's id is its workflow id, with its first run's id
	// unless its settings say the workflow id alone.
	if ev.ExecutionID != parent.ID && !strings.HasPrefix(ev.ExecutionID, parent.ID+".") {
		return untrusted("event of execution %q sent by %q", ev.ExecutionID, parent.ID)
	}
	if want := HookDeliveryWorkflowID(ev); info.WorkflowExecution.ID != want {
		return untrusted("workflow id %q is not %q", info.WorkflowExecution.ID, want)
	}
	return nil
}

// checkDriftRun refuses a drift check of stackID whose workflow id is not
// one its stack's schedule gives its checks (isDriftCheckID).
func checkDriftRun(ctx workflow.Context, stackID string) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if stackID == "" {
		return untrusted("no stack id in the input")
	}
	if !isDriftCheckID(stackID, id) {
		return untrusted("workflow id %q is not the id of a drift check of stack %s (%s-<time>)", id, stackID, contract.DriftScheduleID(stackID))
	}
	return nil
}

// checkGraphRun refuses a graph execution whose workflow id is not its
// cluster's lock id (or, for a dry run, a dry-run id of the cluster).
func checkGraphRun(ctx workflow.Context, in GraphExecutionInput) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if in.ClusterID == "" {
		return untrusted("no cluster id in the input")
	}
	if in.Request.DryRun {
		prefix := graphDryRunIDPrefix + in.ClusterID
		if !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+37 || !hasNonce(id) {
			return untrusted("workflow id %q is not the id of a graph dry run of cluster %s (%s-<uuid>)", id, in.ClusterID, prefix)
		}
	} else if want := GraphWorkflowID(in.ClusterID); id != want {
		return untrusted("workflow id %q is not %q, the id of cluster %s's graph executions", id, want, in.ClusterID)
	}
	return checkSettings(ctx, in.Settings)
}

// checkSettings refuses settings that would have the execution read or
// write another execution's data (an ExecutionID other than its own
// workflow id) or send control-plane steps to a queue other than the one
// it runs on.
func checkSettings(ctx workflow.Context, s Settings) error {
	info := workflow.GetInfo(ctx)
	if s.ExecutionID != "" && s.ExecutionID != info.WorkflowExecution.ID {
		return untrusted("execution id %q is not this workflow's id %q", s.ExecutionID, info.WorkflowExecution.ID)
	}
	if s.ControlQueue != "" && s.ControlQueue != info.TaskQueueName {
		return untrusted("control queue %q is not this workflow's task queue %q", s.ControlQueue, info.TaskQueueName)
	}
	return nil
}

// checkShard refuses a shard that is not the child its parent execution
// starts: it must have a parent, and its id must be the execution's shard
// id for its index.
func checkShard(ctx workflow.Context, in ShardInput) error {
	info := workflow.GetInfo(ctx)
	parent := info.ParentWorkflowExecution
	if parent == nil {
		return untrusted("a shard runs only as the child of its execution")
	}
	exec := in.Options.ExecutionID
	if exec != parent.ID && !strings.HasPrefix(exec, parent.ID+".") {
		return untrusted("execution id %q is not the parent's %q", exec, parent.ID)
	}
	want := (&shardRun{}).childID(exec, in.Shard.Index, in.Compensate)
	if info.WorkflowExecution.ID != want {
		return untrusted("workflow id %q is not %q", info.WorkflowExecution.ID, want)
	}
	if q := in.Options.ControlQueue; q != "" && q != info.TaskQueueName {
		return untrusted("control queue %q is not this workflow's task queue %q", q, info.TaskQueueName)
	}
	return nil
}
