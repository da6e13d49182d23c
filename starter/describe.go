package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/workflows"
)

// Execution is one run as the API shows it.
type Execution struct {
	ID         string                `json:"id"`
	Kind       model.ExecutionKind   `json:"kind"`
	Status     model.ExecutionStatus `json:"status"`
	StackID    string                `json:"stackId,omitempty"`
	ClusterID  string                `json:"clusterId,omitempty"`
	RetryOf    string                `json:"retryOf,omitempty"`
	WorkflowID string                `json:"workflowId"`
	RunID      string                `json:"runId"`
	Namespace  string                `json:"namespace,omitempty"`
	StartedAt  *model.Time           `json:"startedAt,omitempty"`
	ClosedAt   *model.Time           `json:"closedAt,omitempty"`
	// Progress is the latest progress query answer (counts and steps).
	Progress *model.ProgressPage `json:"progress,omitempty"`
	// Steps are every step's live state (a page of them for huge runs).
	Steps []model.StepProgress `json:"steps"`
	// Plan is a finished dry-run's plan; Report a finished apply's or
	// destroy's report (also of a failed one).
	Plan   *model.Plan   `json:"plan,omitempty"`
	Report *model.Report `json:"report,omitempty"`
	// DryRun is a finished dry-run's summary as the workflow returned it.
	DryRun *workflows.DryRunResult `json:"dryRun,omitempty"`
	// Awaiting is "decision" while a step waits for one, "approval"
	// while a plan does; Approval where a plan's approval stands.
	Awaiting string          `json:"awaiting,omitempty"`
	Approval *model.Approval `json:"approval,omitempty"`
	Error    string          `json:"error,omitempty"`
	UIURL    string          `json:"uiUrl,omitempty"`
}

// Finished reports whether the execution has closed.
func (e *Execution) Finished() bool {
	return e.Status != model.ExecRunning && e.Status != model.ExecWaiting && e.Status != ""
}

var workflowKinds = map[string]model.ExecutionKind{
	"ApplyWorkflow": model.ExecApply, "DryRunWorkflow": model.ExecDryRun,
	"DestroyWorkflow": model.ExecDestroy, "GraphExecutionWorkflow": model.ExecGraph,
	"DriftCheckWorkflow": model.ExecDrift,
}

// Describe returns an execution with its status, steps and, once it
// finished, its report or plan. Steps are the first page (see Progress for
// paging through huge executions).
func (s *Starter) Describe(ctx context.Context, id string) (*Execution, error) {
	return s.describe(ctx, id, func(wfID, runID string) (*model.ProgressPage, error) {
		return s.progress(ctx, wfID, runID, 0, 0)
	})
}

// describe describes an execution with the progress read gives it.
func (s *Starter) describe(ctx context.Context, id string, read func(wfID, runID string) (*model.ProgressPage, error)) (*Execution, error) {
	wfID, runID := ParseExecutionID(id)
	desc, err := s.c.DescribeWorkflowExecution(ctx, wfID, runID)
	if err != nil {
		return nil, notFoundOr(err, id)
	}
	info := desc.GetWorkflowExecutionInfo()
	if _, ok := workflowKinds[info.GetType().GetName()]; !ok {
		return nil, fmt.Errorf("%w: %s is not a Cairn execution", ErrNotFound, id)
	}
	runID = info.GetExecution().GetRunId()
	e := &Execution{
		ID: ExecutionID(wfID, runID), Kind: workflowKinds[info.GetType().GetName()],
		WorkflowID: wfID, RunID: runID, Namespace: s.cfg.Namespace, UIURL: s.uiURL(wfID, runID),
		Steps: []model.StepProgress{},
	}
	if t := info.GetStartTime(); t != nil {
		at := t.AsTime()
		e.StartedAt = &at
	}
	if t := info.GetCloseTime(); t != nil && info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		at := t.AsTime()
		e.ClosedAt = &at
	}
	sa := info.GetSearchAttributes()
	e.StackID = keyword(sa.GetIndexedFields()[searchattr.Stack.GetName()])
	e.ClusterID = keyword(sa.GetIndexedFields()[searchattr.Cluster.GetName()])
	e.RetryOf = keyword(sa.GetIndexedFields()[searchattr.RetryOf.GetName()])

	if p, err := read(wfID, runID); err == nil {
		e.Progress = p
		e.Steps = p.Steps
		e.Approval = p.Approval
	}
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		e.Status = model.ExecRunning
		if e.Progress != nil && len(e.Progress.Waiting) > 0 {
			e.Status = model.ExecWaiting
		}
		if e.Progress != nil && e.Progress.Awaiting != "" {
			e.Status, e.Awaiting = model.ExecWaiting, e.Progress.Awaiting
		}
		if e.Approval != nil {
			e.Plan = s.storedPlan(ctx, e.ID, nil)
		}
		return e, nil
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		e.Status = model.ExecCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		e.Status = model.ExecCanceled
	default:
		e.Status = model.ExecFailed
	}
	s.result(ctx, e)
	return e, nil
}

// result fills in the outcome of a closed execution.
func (s *Starter) result(ctx context.Context, e *Execution) {
	run := s.c.GetWorkflow(ctx, e.WorkflowID, e.RunID)
	var err error
	switch e.Kind {
	case model.ExecDryRun:
		var res workflows.DryRunResult
		if err = run.Get(ctx, &res); err == nil {
			e.DryRun = &res
			e.Plan = s.storedPlan(ctx, res.ExecutionID, &model.Plan{Summary: res.Summary, MissingEnvRefs: res.MissingEnvRefs, MissingSecrets: res.MissingSecrets})
			if a := res.Approval; a != nil {
				e.Approval = a
				if a.Status == model.ApprovalApproved {
					e.Report = a.Report
				} else {
					e.Status = model.ExecRejected
				}
			}
		} else if e.Approval != nil {
			e.Plan = s.storedPlan(ctx, e.WorkflowID, nil)
		}
	case model.ExecGraph:
		var res workflows.GraphExecutionResult
		if err = run.Get(ctx, &res); err == nil {
			s.graphResult(ctx, e, &res)
		}
	case model.ExecDrift:
		var res workflows.DriftResult
		err = run.Get(ctx, &res)
	default:
		var res workflows.ApplyResult
		if err = run.Get(ctx, &res); err == nil {
			e.Report = &res.Report
		}
	}
	if err == nil {
		return
	}
	e.Error = workflows.ErrorMessage(err)
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.Type() == workflows.ErrRolledBack {
			e.Status = model.ExecRolledBack
		}
		var report model.Report
		if app.HasDetails() && app.Details(&report) == nil {
			e.Report = &report
		}
		return
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) && canceled.HasDetails() {
		var report model.Report
		if canceled.Details(&report) == nil {
			e.Report = &report
		}
	}
	if e.Report == nil && e.Progress != nil && e.Progress.Report != nil {
		e.Report = e.Progress.Report
	}
}

// storedPlan reads a dry-run's plan from the store, or returns fallback
// (a plan without its steps) when it cannot.
func (s *Starter) storedPlan(ctx context.Context, execID string, fallback *model.Plan) *model.Plan {
	if s.cfg.Store != nil {
		if plan, err := prepare.ReadPlan(ctx, s.cfg.Store, execID); err == nil {
			return plan
		}
	}
	return fallback
}

// Progress queries an execution's progress: every step's status from
// offset, at most limit entries (0: as many as fit in one answer). A
// sharded execution answers with its running shard's steps.
func (s *Starter) Progress(ctx context.Context, id string, offset, limit int) (*model.ProgressPage, error) {
	wfID, runID := ParseExecutionID(id)
	return s.progress(ctx, wfID, runID, offset, limit)
}

func (s *Starter) progress(ctx context.Context, wfID, runID string, offset, limit int) (*model.ProgressPage, error) {
	p, err := s.queryProgress(ctx, wfID, runID, offset, limit, nil)
	if err != nil {
		return nil, notFoundOr(err, ExecutionID(wfID, runID))
	}
	if p.Shard != nil && p.Shard.Shards > 0 {
		s.shardSteps(ctx, p, offset, limit)
	}
	return p, nil
}

// shardSteps fills a sharded execution's page from its shards, which
// answer for their steps: the running shard for what runs and waits, and
// every shard that ran, in shard order, for the step states, so a
// finished execution lists all its steps and offset counts across the
// shards. A page holds at most limit steps (0 or more than
// workflows.MaxProgressSteps means that many); a shard's page cut short by its size bound
// ends the page there, so a caller paging on by offset misses nothing.
//
// Cost: a progress query of each shard a page takes steps from and of the
// running one; a finished shard's (which replays its history) once per
// page it is asked for (shardPage). The shards a page takes nothing from
// are counted from the parent's ShardProgress.Entries, not queried: paging
// through 48,652 steps in 10 shards queried (replayed) every shard for
// every page, and a failed execution's first page replayed them all.
func (s *Starter) shardSteps(ctx context.Context, p *model.ProgressPage, offset, limit int) {
	last := p.Shard.Shards - 1
	if p.Report == nil && p.Shard.WorkflowID != "" {
		last = min(p.Shard.Active, last) // later shards have not started
	}
	if limit <= 0 || limit > workflows.MaxProgressSteps {
		limit = workflows.MaxProgressSteps
	}
	p.Steps, p.Entries, p.Offset = []model.StepProgress{}, 0, offset
	full := false // the page takes no more steps
	for k := 0; k <= last; k++ {
		id := workflows.ShardWorkflowID(p.ExecutionID, k)
		from := max(offset-p.Entries, 0)
		want := max(limit-len(p.Steps), 1)
		finished := p.Report != nil || k < p.Shard.Active
		if k < len(p.Shard.Entries) && p.Shard.Entries[k] > 0 && (full || from >= p.Shard.Entries[k]) {
			p.Entries += p.Shard.Entries[k] // nothing of it on this page
			continue
		}
		child, ok := s.shardPage(ctx, id, from, want, finished)
		if !ok {
			continue // a shard the execution never reached
		}
		if !full {
			p.Steps = append(p.Steps, child.Steps...)
			cut := len(child.Steps) < child.Entries-from
			full = cut || len(p.Steps) >= limit
		}
		p.Entries += child.Entries
		if id == p.Shard.WorkflowID {
			// The running shard knows who runs and who waits.
			p.Waiting, p.Running = child.Waiting, child.Running
			p.Done += child.Done
			if len(child.Waiting) > 0 {
				p.Status, p.Awaiting = model.ExecWaiting, workflows.AwaitingDecision
			}
		}
	}
}

// shardPage is one page of shard id's progress; a finished shard's pages
// are kept, since they no longer change. ok is false when the shard does
// not answer (the execution never reached it).
func (s *Starter) shardPage(ctx context.Context, id string, from, want int, finished bool) (*model.ProgressPage, bool) {
	key := fmt.Sprintf("%s\x00%d\x00%d", id, from, want)
	if finished {
		if page, ok := s.closedShards.Get(key); ok {
			return page, true
		}
	}
	page, err := s.queryProgress(ctx, id, "", from, want, nil)
	if err != nil {
		return nil, false
	}
	if finished {
		s.closedShards.Put(key, page)
	}
	return page, true
}

// Await blocks until the execution closes (or ctx ends) and describes it.
func (s *Starter) Await(ctx context.Context, id string) (*Execution, error) {
	wfID, runID := ParseExecutionID(id)
	if err := s.c.GetWorkflow(ctx, wfID, runID).Get(ctx, nil); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return s.Describe(ctx, id)
}

// Cancel asks a running execution to stop; an apply then rolls back. A
// workflow that is not one of Cairn's executions (another type, an id of
// another shape, another task queue) is refused with ErrNotFound, so the
// API cannot stop other work in the namespace.
func (s *Starter) Cancel(ctx context.Context, id string) error {
	wfID, runID, info, err := s.describeOurs(ctx, id)
	if err != nil {
		return err
	}
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("%w: %s", ErrFinished, id)
	}
	if err := s.c.CancelWorkflow(ctx, wfID, runID); err != nil {
		return notFoundOr(err, id)
	}
	return nil
}

// Decide answers a paused execution: retry, skip, rollback or abort the
// waiting step (req.Step picks one of several), the steps req.Steps names,
// or every waiting step (req.All), in one Update.
func (s *Starter) Decide(ctx context.Context, id string, req model.DecisionRequest) (*model.DecisionResult, error) {
	wfID, runID, _, err := s.describeOurs(ctx, id)
	if err != nil {
		return nil, err
	}
	// A sharded execution's waiting step is in its running shard.
	if p, err := s.progress(ctx, wfID, runID, 0, 1); err == nil && p.Shard != nil && p.Shard.WorkflowID != "" {
		wfID, runID = p.Shard.WorkflowID, ""
	}
	if req.Nonce, err = s.actNonce(ctx, wfID, contract.ActDecide, req.By); err != nil {
		return nil, err
	}
	res, err := update[model.DecisionResult](ctx, s.c, wfID, runID, workflows.DecisionUpdate, req)
	if err == nil {
		return res, nil
	}
	msg := err.Error()
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &app) && app.Type() == contract.ActNotIssuedType:
		return nil, fmt.Errorf("invalid decision: %s", workflows.ErrorMessage(err))
	case strings.Contains(msg, "no step is waiting"), strings.Contains(msg, "not waiting for a decision"):
		return nil, fmt.Errorf("%w: %s", ErrNotWaiting, workflows.ErrorMessage(err))
	case strings.Contains(msg, "unknown decision"):
		return nil, fmt.Errorf("invalid decision: %s", workflows.ErrorMessage(err))
	}
	var done *serviceerror.NotFound
	if errors.As(err, &done) || strings.Contains(msg, "workflow execution already completed") {
		return nil, fmt.Errorf("%w: %s", ErrFinished, id)
	}
	return nil, err
}

// Filter selects executions from Temporal visibility.
type Filter struct {
	Stack     string
	Cluster   string
	Kind      model.ExecutionKind
	Status    model.ExecutionStatus
	Limit     int
	PageToken []byte
}

// List returns executions (newest first, the visibility store's default
// order) with the next page token. Closed executions that rolled back are
// listed as failed: visibility does not tell them apart; Describe does.
// Running executions that wait for an operator carry the CairnAwaiting
// search attribute ("decision": a step paused; "approval": a plan): they
// list as waiting with Awaiting set, and status running leaves them out.
// Plans that ended rejected (rejected, expired or stale) are told apart by
// the CairnApproval search attribute, which also marks plans awaiting
// approval that began waiting before CairnAwaiting existed. Cost: one
// visibility query, no per-execution call.
func (s *Starter) List(ctx context.Context, f Filter) ([]*Execution, []byte, error) {
	var q []string
	types := make([]string, 0, len(workflowKinds))
	for _, t := range []string{"ApplyWorkflow", "DryRunWorkflow", "DestroyWorkflow", "GraphExecutionWorkflow", "DriftCheckWorkflow"} {
		types = append(types, quote(t))
	}
	q = append(q, "WorkflowType IN ("+strings.Join(types, ", ")+")")
	if f.Stack != "" {
		q = append(q, searchattr.Stack.GetName()+" = "+quote(f.Stack))
	}
	if f.Cluster != "" {
		q = append(q, searchattr.Cluster.GetName()+" = "+quote(f.Cluster))
	}
	if f.Kind != "" {
		q = append(q, searchattr.Kind.GetName()+" = "+quote(string(f.Kind)))
	}
	approval, awaiting := searchattr.Approval.GetName(), searchattr.Awaiting.GetName()
	awaitingApproval := approval + " = " + quote(string(model.ApprovalAwaiting))
	switch f.Status {
	case "":
	case model.ExecRunning:
		q = append(q, "ExecutionStatus = 'Running'", awaiting+" IS NULL", "("+approval+" IS NULL OR "+approval+" != "+quote(string(model.ApprovalAwaiting))+")")
	case model.ExecWaiting:
		q = append(q, "ExecutionStatus = 'Running'", "("+awaiting+" IS NOT NULL OR "+awaitingApproval+")")
	case model.ExecCompleted:
		q = append(q, "ExecutionStatus = 'Completed'", "("+approval+" IS NULL OR "+approval+" = "+quote(string(model.ApprovalApproved))+")")
	case model.ExecRejected:
		// Plans that ended without being applied.
		q = append(q, "ExecutionStatus = 'Completed'", approval+" IN ("+quote(string(model.ApprovalRejected))+", "+
			quote(string(model.ApprovalExpired))+", "+quote(string(model.ApprovalStale))+")")
	case model.ExecFailed, model.ExecRolledBack:
		q = append(q, "ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut')")
	case model.ExecCanceled:
		q = append(q, "ExecutionStatus = 'Canceled'")
	default:
		return nil, nil, fmt.Errorf("unknown status %q", f.Status)
	}
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: s.cfg.Namespace, PageSize: int32(limit), NextPageToken: f.PageToken,
		Query: strings.Join(q, " AND "),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list executions: %w", err)
	}
	out := make([]*Execution, 0, len(resp.GetExecutions()))
	for _, info := range resp.GetExecutions() {
		wfID, runID := info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()
		e := &Execution{
			ID: ExecutionID(wfID, runID), Kind: workflowKinds[info.GetType().GetName()],
			WorkflowID: wfID, RunID: runID, Namespace: s.cfg.Namespace, UIURL: s.uiURL(wfID, runID),
			Steps: []model.StepProgress{},
		}
		sa := info.GetSearchAttributes().GetIndexedFields()
		e.StackID = keyword(sa[searchattr.Stack.GetName()])
		e.ClusterID = keyword(sa[searchattr.Cluster.GetName()])
		e.RetryOf = keyword(sa[searchattr.RetryOf.GetName()])
		if t := info.GetStartTime(); t != nil {
			at := t.AsTime()
			e.StartedAt = &at
		}
		switch info.GetStatus() {
		case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			e.Status = model.ExecRunning
		case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
			e.Status = model.ExecCompleted
		case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
			e.Status = model.ExecCanceled
		default:
			e.Status = model.ExecFailed
		}
		if w := keyword(sa[awaiting]); w != "" && e.Status == model.ExecRunning {
			e.Status, e.Awaiting = model.ExecWaiting, w
		}
		listedApproval(e, model.ApprovalStatus(keyword(sa[approval])))
		if t := info.GetCloseTime(); t != nil && e.Status != model.ExecRunning {
			at := t.AsTime()
			e.ClosedAt = &at
		}
		out = append(out, e)
	}
	return out, resp.GetNextPageToken(), nil
}

// listedApproval sets a listed execution's status from its approval's: a
// running plan awaiting approval is waiting for it, a completed plan that
// was not approved is rejected.
func listedApproval(e *Execution, a model.ApprovalStatus) {
	switch {
	case a == "":
	case e.Status == model.ExecRunning && a == model.ApprovalAwaiting:
		e.Status, e.Awaiting = model.ExecWaiting, workflows.AwaitingApproval
	case e.Status == model.ExecCompleted && a != model.ApprovalApproved && a != model.ApprovalAwaiting:
		e.Status = model.ExecRejected
	}
}

// Retry starts a failed execution again with the same input, as a new
// execution linked to the first; steps that were done come back as noops.
func (s *Starter) Retry(ctx context.Context, id string) (*Execution, error) {
	kind, input, origin, err := s.retrySource(ctx, id, "")
	if err != nil {
		return nil, err
	}
	dc := s.cfg.DataConverter
	switch kind {
	case model.ExecApply:
		var in workflows.ApplyInput
		if err := dc.FromPayloads(input, &in); err != nil {
			return nil, fmt.Errorf("retry %s: input: %w", id, err)
		}
		return s.StartApply(ctx, StackRun{StackID: in.StackID, SnapshotHash: in.SnapshotHash, URLs: in.URLs, ClusterID: in.ClusterID,
			OnFailure: in.OnFailure, Parallelism: in.Parallelism, BatchSize: in.BatchSize, RetryOf: origin})
	case model.ExecDestroy:
		var in workflows.DestroyInput
		if err := dc.FromPayloads(input, &in); err != nil {
			return nil, fmt.Errorf("retry %s: input: %w", id, err)
		}
		return s.StartDestroy(ctx, StackRun{StackID: in.StackID, ClusterID: in.ClusterID, RemoveStack: in.RemoveStack,
			OnFailure: in.OnFailure, Parallelism: in.Parallelism, BatchSize: in.BatchSize, RetryOf: origin})
	case model.ExecDryRun:
		var in workflows.DryRunInput
		if err := dc.FromPayloads(input, &in); err != nil {
			return nil, fmt.Errorf("retry %s: input: %w", id, err)
		}
		return s.StartDryRun(ctx, StackRun{StackID: in.StackID, SnapshotHash: in.SnapshotHash, URLs: in.URLs, ClusterID: in.ClusterID,
			Parallelism: in.Parallelism, BatchSize: in.BatchSize, RetryOf: origin})
	case model.ExecGraph:
		return s.retryGraph(ctx, input, origin)
	}
	return nil, fmt.Errorf("retry %s: not an execution this starter runs", id)
}

func notFoundOr(err error, id string) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return err
}

// quote makes s one string literal of a visibility query: backslashes and
// quotes are escaped, so no value can end the literal and add a clause.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, `"`, `\"`).Replace(s) + "'"
}
