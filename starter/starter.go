// Package starter is the client side of Cairn's executions: it starts
// apply, dry-run and destroy workflows (one apply or destroy per stack at a
// time, by workflow id), and describes, lists, awaits, cancels, retries and
// decides them through Temporal.
package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/internal/ttlcache"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/workflows"
)

// Config sets where executions run and their defaults.
type Config struct {
	// TaskQueue is the control plane's queue (default "cairn").
	TaskQueue string
	// Namespace is the Temporal namespace, for UI links (default "default").
	Namespace string
	// UIURL is the Temporal UI's base URL; empty leaves out links.
	UIURL string
	// Store, when set, lets Describe return a dry-run's full plan.
	Store store.Store
	// DataConverter is the client's (with the payload codec, when one is
	// set); Retry reads a run's input with it. Nil means the default.
	DataConverter converter.DataConverter
	// Defaults for every execution; zero values take the workflows'.
	Parallelism      int
	BatchSize        int
	ShardUnits       int
	NodeWait         time.Duration
	StepTimeout      time.Duration
	HeartbeatTimeout time.Duration
}

// Starter starts and queries executions.
type Starter struct {
	c   client.Client
	cfg Config
	// closedShards keeps pages of shards that finished (their progress no
	// longer changes), so following a sharded execution does not replay
	// every finished shard on each poll: at most closedShardPages pages of
	// at most about 256 KiB each.
	closedShards *ttlcache.Cache[*model.ProgressPage]
	// progressQueries counts the progress queries asked (ProgressQueries).
	progressQueries atomic.Int64
}

// closedShardPages bounds Starter.closedShards; a page is kept
// closedShardTTL, short because a reset of an execution runs its shards
// again under the same workflow ids.
const (
	closedShardPages = 64
	closedShardTTL   = time.Minute
)

// New returns a Starter over c.
func New(c client.Client, cfg Config) *Starter {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = "cairn"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.DataConverter == nil {
		cfg.DataConverter = converter.GetDefaultDataConverter()
	}
	return &Starter{c: c, cfg: cfg, closedShards: ttlcache.New[*model.ProgressPage](closedShardPages, closedShardTTL)}
}

// Errors the starter returns (wrapped); the API maps them to statuses.
var (
	ErrNotFound   = errors.New("execution not found")
	ErrNotWaiting = errors.New("no step is waiting for a decision")
	ErrFinished   = errors.New("execution already finished")
)

// ConflictError says the stack (or cluster) is held by a running execution.
type ConflictError struct {
	Running string // id of the running execution
	Target  string // "stack s1"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s is busy: execution %s is running", e.Target, e.Running)
}

// StackRun asks for an apply, dry-run or destroy of a stack.
type StackRun struct {
	StackID      string
	SnapshotHash string // the package (apply, dry-run)
	// URLs, without a SnapshotHash, are read for the package inside the
	// execution (a stack's URLs).
	URLs []string
	// RemoveStack has a destroy remove the stack record once every
	// resource is deleted (DELETE /v1/stacks/{id}).
	RemoveStack bool
	ClusterID   string // nodes for targeted resources
	OnFailure   model.OnFailure
	Parallelism int
	BatchSize   int
	// RetryOf links an execution retried as a new one.
	RetryOf string
	// RunGuards has a dry-run run exec guard commands (unless, onlyif)
	// to decide its plan; without it a dry-run runs no command.
	RunGuards bool
	// Params names the execution's parameters in the store (see
	// contract.ParamsExecution); the workflow carries the name only.
	Params string
	// Approval has a dry-run wait for approval and apply its plan once
	// approved (an approved plan).
	Approval *contract.ApprovalSettings
}

// Workflow ids: one apply or destroy per stack at a time (the workflows
// check they run under the id their input calls for).
func stackWorkflowID(stackID string) string { return workflows.StackWorkflowID(stackID) }

// ExecutionID is the id users see: "<workflowID>.<runID>", or the workflow
// id alone for dry-runs (unique by themselves).
func ExecutionID(workflowID, runID string) string {
	if runID == "" || strings.HasPrefix(workflowID, "dryrun-") {
		return workflowID
	}
	return workflowID + "." + runID
}

// ParseExecutionID splits an execution id into workflow and run id.
func ParseExecutionID(id string) (workflowID, runID string) {
	if i := strings.LastIndex(id, "."); i > 0 {
		if _, err := uuid.Parse(id[i+1:]); err == nil {
			return id[:i], id[i+1:]
		}
	}
	return id, ""
}

func (s *Starter) settings(run StackRun) workflows.Settings {
	st := workflows.Settings{
		OnFailure: run.OnFailure, Parallelism: run.Parallelism, BatchSize: run.BatchSize,
		ShardUnits: s.cfg.ShardUnits, ClusterID: run.ClusterID, ControlQueue: s.cfg.TaskQueue,
		NodeWait: s.cfg.NodeWait, StepTimeout: s.cfg.StepTimeout, HeartbeatTimeout: s.cfg.HeartbeatTimeout,
		RunGuards: run.RunGuards,
	}
	if st.Parallelism <= 0 {
		st.Parallelism = s.cfg.Parallelism
	}
	if st.BatchSize <= 0 {
		st.BatchSize = s.cfg.BatchSize
	}
	return st
}

// boundSettings are run's settings bound to a new start nonce for
// workflow id wfID (see nonce).
func (s *Starter) boundSettings(ctx context.Context, run StackRun, wfID string) (workflows.Settings, error) {
	st := s.settings(run)
	n, err := s.nonce(ctx, wfID)
	if err != nil {
		return st, err
	}
	st.Nonce = n
	return st, nil
}

func (s *Starter) options(id string, kind model.ExecutionKind, run StackRun, summary string, lock bool) client.StartWorkflowOptions {
	attrs := []temporal.SearchAttributeUpdate{searchattr.Kind.ValueSet(string(kind)), searchattr.Stack.ValueSet(run.StackID)}
	if run.ClusterID != "" {
		attrs = append(attrs, searchattr.Cluster.ValueSet(run.ClusterID))
	}
	if run.RetryOf != "" {
		attrs = append(attrs, searchattr.RetryOf.ValueSet(run.RetryOf))
	}
	o := client.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             s.cfg.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		StaticSummary:         summary,
	}
	if lock {
		o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
		o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		o.WorkflowExecutionErrorWhenAlreadyStarted = true
	}
	return o
}

// StartApply starts applying a package snapshot to a stack. It fails with
// *ConflictError while another apply or destroy of the stack runs.
func (s *Starter) StartApply(ctx context.Context, run StackRun) (*Execution, error) {
	if run.StackID == "" || run.SnapshotHash == "" && len(run.URLs) == 0 {
		return nil, errors.New("apply: stack id and a snapshot hash or URLs are required")
	}
	summary := fmt.Sprintf("apply %s to stack %s", packageName(run), run.StackID)
	st, err := s.boundSettings(ctx, run, stackWorkflowID(run.StackID))
	if err != nil {
		return nil, err
	}
	in := workflows.ApplyInput{Settings: st, StackID: run.StackID, SnapshotHash: run.SnapshotHash, URLs: urlsUnlessSnapshot(run), Params: run.Params}
	return s.start(ctx, model.ExecApply, run, s.options(stackWorkflowID(run.StackID), model.ExecApply, run, summary, true), workflows.ApplyWorkflow, in)
}

// StartDestroy starts deleting everything a stack records.
func (s *Starter) StartDestroy(ctx context.Context, run StackRun) (*Execution, error) {
	if run.StackID == "" {
		return nil, errors.New("destroy: stack id is required")
	}
	summary := "destroy stack " + run.StackID
	st, err := s.boundSettings(ctx, run, stackWorkflowID(run.StackID))
	if err != nil {
		return nil, err
	}
	in := workflows.DestroyInput{Settings: st, StackID: run.StackID, RemoveStack: run.RemoveStack}
	return s.start(ctx, model.ExecDestroy, run, s.options(stackWorkflowID(run.StackID), model.ExecDestroy, run, summary, true), workflows.DestroyWorkflow, in)
}

// StartDryRun starts planning a package snapshot against a stack; it takes
// no lock and changes nothing.
func (s *Starter) StartDryRun(ctx context.Context, run StackRun) (*Execution, error) {
	if run.StackID == "" || run.SnapshotHash == "" && len(run.URLs) == 0 {
		return nil, errors.New("dry-run: stack id and a snapshot hash or URLs are required")
	}
	id := workflows.DryRunWorkflowID(run.StackID, uuid.NewString())
	st, err := s.boundSettings(ctx, run, id)
	if err != nil {
		return nil, err
	}
	st.ExecutionID = id
	summary := fmt.Sprintf("dry-run of %s on stack %s", packageName(run), run.StackID)
	if run.Approval != nil {
		summary = fmt.Sprintf("plan of %s on stack %s, applied once approved", packageName(run), run.StackID)
	}
	in := workflows.DryRunInput{Settings: st, StackID: run.StackID, SnapshotHash: run.SnapshotHash, URLs: urlsUnlessSnapshot(run), Params: run.Params,
		Approval: run.Approval}
	return s.start(ctx, model.ExecDryRun, run, s.options(id, model.ExecDryRun, run, summary, false), workflows.DryRunWorkflow, in)
}

func (s *Starter) start(ctx context.Context, kind model.ExecutionKind, run StackRun, o client.StartWorkflowOptions, wf, in any) (*Execution, error) {
	we, err := s.c.ExecuteWorkflow(ctx, o, wf, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, &ConflictError{Running: ExecutionID(o.ID, started.RunId), Target: "stack " + run.StackID}
		}
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	now := time.Now().UTC()
	return &Execution{
		ID: ExecutionID(we.GetID(), we.GetRunID()), Kind: kind, Status: model.ExecRunning,
		StackID: run.StackID, ClusterID: run.ClusterID, RetryOf: run.RetryOf,
		WorkflowID: we.GetID(), RunID: we.GetRunID(), Namespace: s.cfg.Namespace,
		StartedAt: &now, UIURL: s.uiURL(we.GetID(), we.GetRunID()), Steps: []model.StepProgress{},
	}, nil
}

func (s *Starter) uiURL(wfID, runID string) string {
	if s.cfg.UIURL == "" {
		return ""
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", strings.TrimRight(s.cfg.UIURL, "/"), s.cfg.Namespace, wfID, runID)
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// packageName names a run's package for summaries.
func packageName(run StackRun) string {
	if run.SnapshotHash != "" {
		return "package " + short(run.SnapshotHash)
	}
	return fmt.Sprintf("the package at the stack's URLs (%d)", len(run.URLs))
}

// urlsUnlessSnapshot is the URLs to read, none when a snapshot is given.
func urlsUnlessSnapshot(run StackRun) []string {
	if run.SnapshotHash != "" {
		return nil
	}
	return run.URLs
}
