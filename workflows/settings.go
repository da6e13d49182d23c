package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Settings are the knobs every execution accepts.
type Settings struct {
	// ExecutionID overrides the default id "<workflowID>.<runID>" (dry-runs
	// use their unique workflow id).
	ExecutionID string          `json:"executionId,omitempty"`
	OnFailure   model.OnFailure `json:"onFailure,omitempty"`
	Parallelism int             `json:"parallelism,omitempty"`
	BatchSize   int             `json:"batchSize,omitempty"`
	ShardUnits  int             `json:"shardUnits,omitempty"`
	ClusterID   string          `json:"clusterId,omitempty"`
	// ControlQueue serves control-plane steps; "" = the workflow's queue.
	ControlQueue     string        `json:"controlQueue,omitempty"`
	NodeWait         time.Duration `json:"nodeWait,omitempty"`
	StepTimeout      time.Duration `json:"stepTimeout,omitempty"`
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
	// RunGuards has a dry-run run exec guard commands (see ExecOptions).
	RunGuards bool `json:"runGuards,omitempty"`
	// Only limits a stack's apply or dry-run to these resources
	// (planner.RecordKey: "kind/name@node") and what they depend on:
	// nothing is deleted and the stack record keeps the other
	// resources' entries. A watched change's check and repair use it.
	Only []string `json:"only,omitempty"`
	// Nonce binds the start to a one-time nonce the starter recorded
	// (see consumeStart); children of a Cairn workflow carry none.
	Nonce string `json:"nonce,omitempty"`
}

// prepareInput is the Prepare activity's input for execution execID of
// stack stackID in mode, with these settings' cluster, batch size and
// shard units; snapshotHash and params name the package and its
// parameters ("" for a destroy).
func (s Settings) prepareInput(execID string, mode contract.Mode, stackID, snapshotHash, params string) contract.PrepareInput {
	return contract.PrepareInput{
		ExecutionID: execID, Mode: mode, StackID: stackID,
		SnapshotHash: snapshotHash, ClusterID: s.ClusterID, BatchSize: s.BatchSize, ShardUnits: s.ShardUnits,
		Parallelism: s.Parallelism,
		Params:      params, Only: s.Only,
	}
}

// ExecutionID is the id users see for the running workflow: unique per run
// and URL-safe. It stays the same across a reset of the run.
func ExecutionID(ctx workflow.Context, s Settings) string {
	if s.ExecutionID != "" {
		return s.ExecutionID
	}
	info := workflow.GetInfo(ctx)
	run := info.FirstRunID
	if run == "" {
		run = info.WorkflowExecution.RunID
	}
	return info.WorkflowExecution.ID + "." + run
}

func (s Settings) execOptions(ctx workflow.Context, mode contract.Mode, onFailure model.OnFailure) ExecOptions {
	if s.OnFailure != "" {
		onFailure = s.OnFailure
	}
	return ExecOptions{
		ExecutionID:      ExecutionID(ctx, s),
		Mode:             mode,
		OnFailure:        onFailure,
		Parallelism:      s.Parallelism,
		ControlQueue:     s.ControlQueue,
		Cluster:          s.ClusterID,
		NodeWait:         s.NodeWait,
		StepTimeout:      s.StepTimeout,
		HeartbeatTimeout: s.HeartbeatTimeout,
		RollbackOnCancel: mode == contract.ModeApply,
		RunGuards:        s.RunGuards,
	}.withDefaults(ctx)
}
