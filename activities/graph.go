package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/stepdata"
)

// GraphActivities are the control plane's activities of graph executions:
// adapters that run prepare's preparation and persist what it returns.
// The steps themselves run through the ordinary step activities.
type GraphActivities struct {
	a *Activities
	p *prepare.Preparer
}

// NewGraphActivities returns the graph activities over a's store, which
// prepare graph executions with p.
func NewGraphActivities(a *Activities, p *prepare.Preparer) *GraphActivities {
	return &GraphActivities{a: a, p: p}
}

// maxResultPlanSteps keeps a dry-run's answer far below Temporal's payload
// limit; larger plans are read from the store.
const maxResultPlanSteps = 5000

// PrepareGraph prepares the execution of a pinned graph request
// (prepare.Preparer.Prepare: the steps its expansion holds, neither merged
// nor expanded again) and keeps what the execution reads in the store: the
// task records, the units and their members, the grants of the cluster's
// agents, a dry run's plan and the shards of a large plan. A request that
// cannot run is a non-retryable configuration error.
func (g *GraphActivities) PrepareGraph(ctx context.Context, in contract.PrepareGraphInput) (*contract.PreparedGraph, error) {
	plan, err := g.p.Prepare(ctx, in.ExecutionID, in.Request, in.BatchSize)
	if errors.Is(err, prepare.ErrInvalidGraph) {
		return nil, configError(prepare.InvalidReason(err))
	}
	if err != nil {
		return nil, err
	}
	st := g.a.d.Store
	raw := make(map[string][]byte, len(plan.Records))
	for id, rec := range plan.Records {
		if raw[id], err = json.Marshal(rec); err != nil {
			return nil, err
		}
	}
	if err := st.PutStepDataBatch(ctx, in.ExecutionID, contract.DataGraphTask, raw); err != nil {
		return nil, err
	}
	if err := g.a.persist(ctx, in.ExecutionID, plan.Units, plan.Members); err != nil {
		return nil, err
	}
	if err := g.a.writeGrants(ctx, in.ExecutionID, plan.Cluster.ID, plan.Cluster.Nodes, plan.Units, plan.Members); err != nil {
		return nil, err
	}
	out := &plan.Result
	if plan.DryRun != nil {
		if out.Plan, err = g.storeDryRun(ctx, in.ExecutionID, plan.DryRun); err != nil {
			return nil, err
		}
	}
	if err := g.a.shard(ctx, in.ExecutionID, plan.Units, in.ShardUnits, &out.PreparedPlan); err != nil {
		return nil, err
	}
	return out, nil
}

// storeDryRun keeps a dry-run's plan where ReadPlan finds it and returns it
// (its steps when they are few enough for a workflow result).
func (g *GraphActivities) storeDryRun(ctx context.Context, execID string, plan *model.Plan) (*model.Plan, error) {
	entries := make(map[string][]byte, len(plan.Steps))
	for _, ps := range plan.Steps {
		raw, err := json.Marshal(ps)
		if err != nil {
			return nil, err
		}
		entries[ps.ID] = raw
	}
	if err := g.a.d.Store.PutStepDataBatch(ctx, execID, contract.DataPlan, entries); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(model.Plan{Summary: plan.Summary, MissingEnvRefs: []string{}, MissingSecrets: []string{}})
	if err != nil {
		return nil, err
	}
	if err := g.a.d.Store.PutStepData(ctx, execID, contract.PlanSummaryKey, contract.DataPlanSummary, raw); err != nil {
		return nil, err
	}
	if len(plan.Steps) > maxResultPlanSteps {
		plan.Steps = nil
	}
	return plan, nil
}

// RecordGraphRuns records, for each task that converged on a node in this
// execution, its run as the node's last successful run of the task, with
// the digest of its parameters. Steps that were skipped, failed, planned
// only or already done by a retried execution are left out. Recording is
// idempotent: a retried activity writes the same runs again.
func (g *GraphActivities) RecordGraphRuns(ctx context.Context, in contract.RecordGraphRunsInput) (*contract.RecordGraphRunsResult, error) {
	st := g.a.d.Store
	recs, err := st.ListStepData(ctx, in.ExecutionID, contract.DataGraphTask)
	if err != nil {
		return nil, err
	}
	outs, err := st.ListStepData(ctx, in.ExecutionID, contract.DataOutputs)
	if err != nil {
		return nil, err
	}
	at := time.Now().UTC()
	res := &contract.RecordGraphRunsResult{}
	var runs []model.TaskRun
	for id, raw := range recs {
		var rec prepare.TaskRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("task record of %s: %w", id, err)
		}
		if !rec.Recorded() {
			continue
		}
		outRaw, ok := outs[id]
		if !ok {
			continue
		}
		var o stepdata.Outputs
		if err := json.Unmarshal(outRaw, &o); err != nil {
			return nil, fmt.Errorf("outputs of %s: %w", id, err)
		}
		if o.Outcome == model.OutcomeFailed || o.Outcome == model.OutcomeSkipped {
			continue
		}
		runs = append(runs, model.TaskRun{
			ClusterID: in.ClusterID, NodeID: rec.Node, TaskID: rec.Task,
			ExecutionID: in.ExecutionID, Digest: rec.Digest, At: at,
		})
	}
	// One transaction for them all.
	if err := st.RecordTaskRuns(ctx, in.ClusterID, runs); err != nil {
		return nil, err
	}
	res.Recorded = len(runs)
	// Deployment data no run refers to any more is of no use.
	if _, err := st.PruneDeploymentData(ctx, in.ClusterID, in.ExecutionID); err != nil {
		return nil, err
	}
	return res, nil
}
