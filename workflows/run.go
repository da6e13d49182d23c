package workflows

import (
	"fmt"
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

// tracker answers the progress query through every phase of a run and
// forwards decisions to the executor running at the time.
type tracker struct {
	execID string
	phase  string
	ex     *Executor
	shards *shardRun
	final  *Outcome
	// approval is set while and after a plan awaits approval.
	approval *approvalRun
}

func newTracker(ctx workflow.Context, execID string) (*tracker, error) {
	t := &tracker{execID: execID, phase: "preparing"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, t.progress); err != nil {
		return nil, err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, DecisionUpdate,
		func(ctx workflow.Context, req model.DecisionRequest) (model.DecisionResult, error) {
			return t.ex.Decide(ctx, req)
		},
		workflow.UpdateHandlerOptions{Validator: func(req model.DecisionRequest) error {
			if t.ex == nil {
				if t.shards != nil {
					return fmt.Errorf("decisions go to the running shard %s", t.shards.activeID)
				}
				return fmt.Errorf("no step is waiting for a decision (execution is %s)", t.phase)
			}
			return t.ex.ValidateDecision(req)
		}},
	)
	return t, err
}

func (t *tracker) progress(offset, limit int) (*model.ProgressPage, error) {
	p, err := t.stepProgress(offset, limit)
	if err == nil && t.approval != nil {
		state := t.approval.state
		p.Approval = &state
		if state.Status == model.ApprovalAwaiting {
			p.Status, p.Awaiting = model.ExecWaiting, AwaitingApproval
		}
	}
	return p, err
}

func (t *tracker) stepProgress(offset, limit int) (*model.ProgressPage, error) {
	switch {
	case t.ex != nil:
		p := t.ex.Progress(offset, limit)
		if t.final != nil {
			p.Status, p.Report = t.final.Status(), &t.final.Report
		}
		return p, nil
	case t.shards != nil:
		return t.shards.progress(t.execID, t.final), nil
	}
	p := &model.ProgressPage{ExecutionID: t.execID, Status: model.ExecRunning, Steps: []model.StepProgress{}}
	if t.final != nil {
		p.Status, p.Report = t.final.Status(), &t.final.Report
	}
	return p, nil
}

// prepare runs the Prepare activity on the control plane.
func prepare(ctx workflow.Context, opts ExecOptions, in contract.PrepareInput) (*contract.PreparedPlan, error) {
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue, "prepare "+string(in.Mode), 30*time.Minute))
	var plan contract.PreparedPlan
	if err := workflow.ExecuteActivity(actx, contract.PrepareName, in).Get(ctx, &plan); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &plan, nil
}

// execute runs a prepared plan, in this workflow or shard by shard in
// child workflows when it is too large for one history, on the cluster
// Prepare chose (the stack's recorded one when the input named none).
func (t *tracker) execute(ctx workflow.Context, opts ExecOptions, plan *contract.PreparedPlan) (*Outcome, error) {
	t.phase = "running"
	if plan.ClusterID != "" {
		opts.Cluster = plan.ClusterID
	}
	if len(plan.Shards) > 0 {
		t.shards = &shardRun{plan: plan}
		return t.shards.run(ctx, opts)
	}
	t.ex = NewExecutor(ctx, opts, plan.Units, nil)
	return t.ex.Run(ctx)
}

// finish waits for update handlers still answering, so no decision is left
// without a reply when the workflow closes.
func (t *tracker) finish(ctx workflow.Context, o *Outcome) {
	t.final = o
	t.phase = "finished"
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) })
}

// writeRecord records what an apply or destroy left, on a context that
// cancellation does not reach. The changes are made: giving up on their
// record would leave objects the stack does not know (the next apply
// creates them again) or name objects that are gone, so the write is
// retried until it lands (recordOptions); only an error no retry can fix
// (the stack was removed) ends it.
func writeRecord(ctx workflow.Context, opts ExecOptions, in contract.WriteStackRecordInput) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, recordOptions(opts.ControlQueue, "write stack record "+in.StackID))
	var res contract.StackRecordResult
	if err := workflow.ExecuteActivity(actx, contract.WriteStackRecordName, in).Get(dctx, &res); err != nil {
		return fmt.Errorf("write stack record: %w", err)
	}
	return nil
}
