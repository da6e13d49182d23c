package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/workflows"
)

// ErrInvalidGraphRun marks a graph execution that cannot be started as
// asked (no cluster named).
var ErrInvalidGraphRun = errors.New("invalid graph execution")

// Memo keys of graph executions, shown in the Temporal UI.
const (
	MemoRetryOf = "retryOf"
	MemoTypes   = "graphTypes"
)

// graphWorkflowID is the id that holds a cluster: one graph execution per
// cluster at a time.
func graphWorkflowID(clusterID string) string { return workflows.GraphWorkflowID(clusterID) }

// StartGraph starts a graph execution of run, a request the API checked
// and pinned (prepare.Preparer.Check and Pin); the workflow carries it
// unchanged to the activity that prepares it. While another graph
// execution of the cluster runs it fails with *ConflictError naming it. A
// dry run takes no lock.
func (s *Starter) StartGraph(ctx context.Context, run contract.GraphRequest) (*Execution, error) {
	return s.startGraph(ctx, run, nil)
}

// StartGraphApproval is StartGraph for a cluster under a four-eyes
// policy: the execution first plans (its dry run) and waits for approval
// under the cluster's lock, then runs exactly the steps it planned (the
// pinned request, prepared again), or ends having run nothing.
func (s *Starter) StartGraphApproval(ctx context.Context, run contract.GraphRequest, approval *contract.ApprovalSettings) (*Execution, error) {
	if approval == nil || run.DryRun {
		return nil, fmt.Errorf("%w: an approval is for an execution that runs its steps", ErrInvalidGraphRun)
	}
	return s.startGraph(ctx, run, approval)
}

func (s *Starter) startGraph(ctx context.Context, run contract.GraphRequest, approval *contract.ApprovalSettings) (*Execution, error) {
	if run.ClusterID == "" {
		return nil, fmt.Errorf("%w: a cluster is required", ErrInvalidGraphRun)
	}
	types := run.Types
	if len(types) == 0 {
		types = []string{model.DefaultGraphType}
	}
	id, lock := graphWorkflowID(run.ClusterID), true
	if run.DryRun {
		id, lock = workflows.GraphDryRunWorkflowID(run.ClusterID, uuid.NewString()), false
	}
	st, err := s.boundSettings(ctx, StackRun{ClusterID: run.ClusterID, OnFailure: run.OnFailure, Parallelism: run.Parallelism}, id)
	if err != nil {
		return nil, err
	}
	in := workflows.GraphExecutionInput{Settings: st, Request: run, Approval: approval}
	attrs := []temporal.SearchAttributeUpdate{
		searchattr.Kind.ValueSet(string(model.ExecGraph)),
		searchattr.Cluster.ValueSet(run.ClusterID),
		searchattr.GraphType.ValueSet(strings.Join(types, ",")),
	}
	memo := map[string]any{MemoTypes: types}
	if len(run.RetryOf) > 0 {
		attrs = append(attrs, searchattr.RetryOf.ValueSet(run.RetryOf[0]))
		memo[MemoRetryOf] = run.RetryOf[0]
	}
	o := client.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             s.cfg.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		Memo:                  memo,
		StaticSummary:         graphSummary(run, types),
	}
	if lock {
		o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
		o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		o.WorkflowExecutionErrorWhenAlreadyStarted = true
	}
	we, err := s.c.ExecuteWorkflow(ctx, o, workflows.GraphExecutionWorkflow, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, &ConflictError{Running: ExecutionID(id, started.RunId), Target: "cluster " + run.ClusterID}
		}
		return nil, fmt.Errorf("start graph execution: %w", err)
	}
	now := time.Now().UTC()
	e := &Execution{
		ID: ExecutionID(we.GetID(), we.GetRunID()), Kind: model.ExecGraph, Status: model.ExecRunning,
		ClusterID: run.ClusterID, WorkflowID: we.GetID(), RunID: we.GetRunID(), Namespace: s.cfg.Namespace,
		StartedAt: &now, UIURL: s.uiURL(we.GetID(), we.GetRunID()), Steps: []model.StepProgress{},
	}
	if len(run.RetryOf) > 0 {
		e.RetryOf = run.RetryOf[0]
	}
	return e, nil
}

func graphSummary(run contract.GraphRequest, types []string) string {
	var b strings.Builder
	switch {
	case run.DryRun:
		b.WriteString("dry run of graph ")
	case run.Noop:
		b.WriteString("noop run of graph ")
	default:
		b.WriteString("graph ")
	}
	fmt.Fprintf(&b, "%s on cluster %s", strings.Join(types, ", "), run.ClusterID)
	if len(run.Nodes) > 0 {
		fmt.Fprintf(&b, ", nodes %s", strings.Join(run.Nodes, ","))
	}
	if len(run.Tasks) > 0 {
		fmt.Fprintf(&b, ", tasks %s", strings.Join(run.Tasks, ","))
	}
	if run.Force {
		b.WriteString(", forced")
	}
	if len(run.Events) > 0 {
		fmt.Fprintf(&b, ", events %s", strings.Join(run.Events, ","))
	}
	if len(run.RetryOf) > 0 {
		fmt.Fprintf(&b, " (retry of %s)", run.RetryOf[0])
	}
	return b.String()
}

// RetryGraph starts a finished graph execution that failed (or was
// cancelled) again as a new execution of the same request, linked to it by
// memo and the CairnRetryOf search attribute. Steps it (or the executions
// it retried) completed with the same parameters come back as noops.
//
// A retry runs the steps its original execution expanded: the request
// carries the merged graphs and the expansion the API pinned, and the
// retry neither merges the cluster's graph layers nor expands them onto
// its nodes again. To pick up a changed cluster (graphs, nodes, settings),
// execute anew.
func (s *Starter) RetryGraph(ctx context.Context, id string) (*Execution, error) {
	_, input, origin, err := s.retrySource(ctx, id, model.ExecGraph)
	if err != nil {
		return nil, err
	}
	return s.retryGraph(ctx, input, origin)
}

// retryGraph starts again the graph execution whose input is input; origin
// is that execution's id. The request is started as it is, with origin
// put first in its RetryOf.
func (s *Starter) retryGraph(ctx context.Context, input *commonpb.Payloads, origin string) (*Execution, error) {
	var in workflows.GraphExecutionInput
	if err := s.cfg.DataConverter.FromPayloads(input, &in); err != nil {
		return nil, fmt.Errorf("retry %s: input: %w", origin, err)
	}
	req := in.Request
	req.RetryOf = append([]string{origin}, req.RetryOf...)
	return s.StartGraph(ctx, req)
}

// DescribeGraph is Describe for a graph execution; Describe itself fills
// in the plan of a finished dry run or noop run.
func (s *Starter) DescribeGraph(ctx context.Context, id string) (*Execution, error) {
	return s.Describe(ctx, id)
}

// graphResult fills in what a finished graph execution returned: its
// report and, for a dry run or a noop run, its plan (every step from the
// store when there is one, else what the workflow returned).
func (s *Starter) graphResult(ctx context.Context, e *Execution, res *workflows.GraphExecutionResult) {
	e.Report = &res.Report
	if a := res.Approval; a != nil {
		e.Approval = a
		if a.Status != model.ApprovalApproved {
			e.Status, e.Report = model.ExecRejected, nil
			e.Plan = s.storedPlan(ctx, res.ExecutionID, nil)
			return
		}
	}
	if res.DryRun == nil && !res.Noop {
		return
	}
	if s.cfg.Store != nil {
		if plan, err := prepare.ReadPlan(ctx, s.cfg.Store, res.ExecutionID); err == nil {
			e.Plan = plan
			return
		}
	}
	if res.DryRun != nil {
		e.Plan = res.DryRun
	}
}
