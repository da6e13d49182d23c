package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// GraphExecutionInput runs graph types of a cluster (Fuel's custom graph
// execution). Settings.ClusterID names the cluster; its nodes' task queues
// receive their steps. Request is the request as the API validated and
// pinned it, handed unchanged to the activity that prepares it.
type GraphExecutionInput struct {
	Settings
	Request contract.GraphRequest `json:"request"`
	// Approval, when set (a cluster's four-eyes policy), has the
	// execution plan first and wait for approval (see graphApproval).
	Approval *contract.ApprovalSettings `json:"approval,omitempty"`
}

// GraphExecutionResult is a finished graph execution. Report has the JSON
// name ApplyResult uses, so readers of either find it.
type GraphExecutionResult struct {
	ExecutionID string       `json:"executionId"`
	ClusterID   string       `json:"clusterId"`
	Types       []string     `json:"types"`
	Snapshots   []string     `json:"snapshots"`
	Steps       int          `json:"steps"`
	Report      model.Report `json:"report"`
	// Plan counts what the steps did or, with noop, would do.
	Plan model.Summary `json:"plan"`
	// DryRun is a dry-run's plan (plan only: nothing ran).
	DryRun *model.Plan `json:"dryRun,omitempty"`
	// Noop marks a noop run, whose plan is in the store.
	Noop bool `json:"noop,omitempty"`
	// Tolerated lists failures that stayed within their group's
	// fault_tolerance, so the execution still completed.
	Tolerated []model.StepError `json:"tolerated,omitempty"`
	// Done counts steps the retried executions had completed.
	Done int `json:"done,omitempty"`
	// Approval is where an execution that waited for approval stands.
	Approval *model.Approval `json:"approval,omitempty"`
}

// GraphExecutionWorkflow prepares the steps the API expanded for the
// request (its pinned expansion of the requested graph types onto the
// cluster's nodes) and runs every step on its node with the executor, as
// Fuel runs a custom
// graph: requires/required_for on a node, cross_depends across nodes,
// conditions per node, fail_on_error, strategy caps and group fault
// tolerance. On failure it stops by default (onFailure stop, as Fuel);
// pause waits for an operator's decision. Node history records each task's
// successful runs at the end, so conditions of later executions can ask
// whether a task changed. It runs only under its cluster's lock id
// (GraphWorkflowID), or a graph dry-run id for a dry run.
func GraphExecutionWorkflow(ctx workflow.Context, in GraphExecutionInput) (*GraphExecutionResult, error) {
	if err := checkGraphRun(ctx, in); err != nil {
		return nil, err
	}
	opts := in.execOptions(ctx, contract.ModeApply, model.OnFailureStop)
	// Cancelling a graph only stops it, unless it rolls back on failure.
	opts.RollbackOnCancel = opts.OnFailure == model.OnFailureRollback
	if in.Request.DryRun {
		opts.Mode = contract.ModeDryRun
	}
	t, err := newTracker(ctx, opts.ExecutionID)
	if err != nil {
		return nil, err
	}
	// After the tracker: its queries answer from the first task on.
	if err := consumeStart(ctx, in.Settings, ""); err != nil {
		return nil, err
	}
	types := in.Request.Types
	if len(types) == 0 {
		types = []string{model.DefaultGraphType}
	}
	var approval *model.Approval
	if in.Approval != nil && !in.Request.DryRun {
		if approval, err = graphApproval(ctx, t, opts, in, types); err != nil {
			return nil, err
		}
		if approval.Status != model.ApprovalApproved {
			t.finish(ctx, &Outcome{})
			return &GraphExecutionResult{ExecutionID: opts.ExecutionID, ClusterID: in.ClusterID, Types: types,
				Snapshots: in.Request.Snapshots, Approval: approval}, nil
		}
	}
	plan, err := prepareGraph(ctx, opts, in, in.Request, types)
	if err != nil {
		return nil, err
	}
	// The UI shows which merged graphs ran.
	if err := workflow.UpsertMemo(ctx, map[string]any{"graphSnapshots": plan.Snapshots, "graphSummary": plan.Summary}); err != nil {
		return nil, err
	}
	res := &GraphExecutionResult{
		ExecutionID: opts.ExecutionID, ClusterID: in.ClusterID, Types: types,
		Snapshots: plan.Snapshots, Steps: plan.Steps, Done: plan.Done, Noop: in.Request.Noop, Approval: approval,
	}
	if in.Request.DryRun {
		res.DryRun = plan.Plan
		if plan.Plan != nil {
			res.Plan = plan.Plan.Summary
		}
		workflow.SetCurrentDetails(ctx, "dry run: "+plan.Summary)
		t.finish(ctx, &Outcome{Plan: res.Plan})
		return res, nil
	}

	// Within a group's fault tolerance a failed node fails only its own
	// dependents; the executor goes on. A sharded plan's shards could not
	// count one group's failed nodes together, so it runs without.
	if len(plan.Shards) <= 1 {
		opts.Tolerance = plan.Tolerance
	}
	out, err := t.execute(ctx, opts, &plan.PreparedPlan)
	if err != nil {
		return nil, err
	}
	res.Tolerated = out.Tolerated
	if len(out.Tolerated) > 0 && !out.Failed {
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("completed; %d failed steps within their group's fault_tolerance", len(out.Tolerated)))
	}

	// History and the noop plan are written even when the run failed or
	// was cancelled: what converged did converge.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if in.Request.Noop {
		err = storePlan(dctx, opts, "store noop plan", out)
	} else {
		rctx := workflow.WithActivityOptions(dctx, controlOptions(opts.ControlQueue, "record node history", 10*time.Minute))
		err = workflow.ExecuteActivity(rctx, contract.RecordGraphRunsName, contract.RecordGraphRunsInput{
			ExecutionID: opts.ExecutionID, ClusterID: in.ClusterID,
		}).Get(dctx, nil)
	}
	if err != nil {
		return nil, err
	}
	t.finish(ctx, out)
	res.Report, res.Plan = out.Report, out.Plan
	if err := out.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// prepareGraph runs the PrepareGraph activity for req (the pinned
// request, or its dry run).
func prepareGraph(ctx workflow.Context, opts ExecOptions, in GraphExecutionInput, req contract.GraphRequest, types []string) (*contract.PreparedGraph, error) {
	what := "prepare graph "
	if req.DryRun {
		what = "plan graph "
	}
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue,
		what+strings.Join(types, ", ")+" on "+in.ClusterID, 30*time.Minute))
	var plan contract.PreparedGraph
	err := workflow.ExecuteActivity(actx, contract.PrepareGraphName, contract.PrepareGraphInput{
		ExecutionID: opts.ExecutionID, Request: req, BatchSize: in.BatchSize, ShardUnits: in.ShardUnits,
	}).Get(ctx, &plan)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &plan, nil
}

// graphApproval plans the execution (its dry run, stored as its plan)
// and waits for its approval under the cluster's lock, which it holds:
// no other graph execution of the cluster runs meanwhile. Approved, the
// execution then runs the pinned request it planned: the same merged
// graphs and expanded steps (snapshots the request names), nothing merged
// or expanded again. Cost: one preparation more than an execution without
// approval.
func graphApproval(ctx workflow.Context, t *tracker, opts ExecOptions, in GraphExecutionInput, types []string) (*model.Approval, error) {
	req := in.Request
	req.DryRun, req.Noop = true, false
	planned, err := prepareGraph(ctx, opts, in, req, types)
	if err != nil {
		return nil, err
	}
	res := &DryRunResult{ExecutionID: opts.ExecutionID, Steps: planned.Steps}
	if planned.Plan != nil {
		res.Summary = planned.Plan.Summary
	}
	dry := DryRunInput{Settings: in.Settings, Approval: in.Approval}
	if err := awaitApproval(ctx, t, opts, dry, res, ""); err != nil {
		return nil, err
	}
	return res.Approval, nil
}
