package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Every execution answers the "progress" query and takes the "decision"
// Update through a tracker, from before its plan is prepared until it
// closes: the tracker hands both to whatever runs at the time (the
// executor, a sharded run, an approval awaited).

// tracker answers the progress query through every stage of an execution and
// forwards decisions to the executor running at the time.
type tracker struct {
	execID string
	stage  string // preparing, running or finished, for the decision validator
	ex     *Executor
	shards *shardRun
	final  *Outcome
	// approval is set while and after a plan awaits approval.
	approval *approvalRun
	// memo keeps the execution's operator acts in its Temporal memo.
	memo memoLog
}

func newTracker(ctx workflow.Context, execID string) (*tracker, error) {
	t := &tracker{execID: execID, stage: "preparing"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, t.progress); err != nil {
		return nil, err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, DecisionUpdate,
		func(ctx workflow.Context, req model.DecisionRequest) (model.DecisionResult, error) {
			res, by, err := t.ex.Decide(ctx, req)
			if err == nil {
				t.memo.add(ctx, MemoEntry{Action: string(req.Action), By: by, Steps: res.Steps})
			}
			return res, err
		},
		workflow.UpdateHandlerOptions{Validator: func(req model.DecisionRequest) error {
			if t.ex == nil {
				if t.shards != nil {
					return fmt.Errorf("decisions go to the running shard %s", t.shards.activeID)
				}
				return fmt.Errorf("no step is waiting for a decision (execution is %s)", t.stage)
			}
			return t.ex.ValidateDecision(req)
		}},
	)
	return t, err
}

// progress answers the progress query: a page of steps from offset, or,
// with since, the changes after a version (see ProgressSince).
func (t *tracker) progress(offset, limit int, since *ProgressSince) (*model.ProgressPage, error) {
	p, err := t.stepProgress(offset, limit, since)
	if err == nil && t.approval != nil {
		state := t.approval.state
		p.Approval = &state
		if state.Status == model.ApprovalAwaiting {
			p.Status, p.Awaiting = model.ExecWaiting, AwaitingApproval
		}
	}
	return p, err
}

func (t *tracker) stepProgress(offset, limit int, since *ProgressSince) (*model.ProgressPage, error) {
	switch {
	case t.ex != nil:
		var p *model.ProgressPage
		if since != nil {
			p = t.ex.Changes(since.Version, limit)
		} else {
			p = t.ex.Progress(offset, limit)
		}
		if t.final != nil {
			p.Status, p.Report = t.final.Status(), &t.final.Report
		}
		return p, nil
	case t.shards != nil:
		return t.shards.progress(t.execID, t.final), nil
	}
	// Nothing has a state yet: no change to list, and a version above 0
	// is not this execution's.
	p := &model.ProgressPage{ExecutionID: t.execID, Status: model.ExecRunning, Steps: []model.StepProgress{}}
	p.Reset = since != nil && since.Version != 0
	if t.final != nil {
		p.Status, p.Report = t.final.Status(), &t.final.Report
	}
	return p, nil
}

// execute runs a prepared plan, in this workflow or shard by shard in
// child workflows when it is too large for one history, on the cluster
// Prepare chose (the stack's recorded one when the input named none).
func (t *tracker) execute(ctx workflow.Context, opts ExecOptions, plan *contract.PreparedPlan) (*Outcome, error) {
	t.stage = "running"
	if plan.ClusterID != "" {
		opts.Cluster = plan.ClusterID
	}
	units := plan.Units
	switch len(plan.Shards) {
	case 0:
	case 1: // too large for one payload, not for one workflow
		var err error
		if units, err = loadUnits(ctx, opts, plan.Shards[0]); err != nil {
			return nil, err
		}
	default:
		t.shards = &shardRun{plan: plan}
		return t.shards.run(ctx, opts)
	}
	t.ex = NewExecutor(ctx, opts, units, nil)
	return t.ex.Run(ctx)
}

// finish waits for update handlers still answering, so no decision is left
// without a reply when the workflow closes.
func (t *tracker) finish(ctx workflow.Context, o *Outcome) {
	if o != nil && o.Cancelled {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		t.memo.add(dctx, MemoEntry{Action: "cancel"})
	}
	t.final = o
	t.stage = "finished"
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) })
}
