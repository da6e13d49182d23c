package workflows

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// ShardInput asks a child workflow to run (or undo) one shard of a large
// plan. The shard's units are in the store; FailedBefore lists units of
// earlier shards that did not succeed, NotifiedBefore the steps of earlier
// shards that changed and refresh steps in other units.
type ShardInput struct {
	Options        ExecOptions    `json:"options"`
	Shard          contract.Shard `json:"shard"`
	FailedBefore   []int          `json:"failedBefore,omitempty"`
	NotifiedBefore []string       `json:"notifiedBefore,omitempty"`
	Compensate     bool           `json:"compensate,omitempty"`
}

// ShardWorkflow runs one shard with the executor and returns its outcome;
// it never fails for failed steps, so the parent decides what follows.
func ShardWorkflow(ctx workflow.Context, in ShardInput) (*Outcome, error) {
	if err := checkShard(ctx, in); err != nil {
		return nil, err
	}
	units, err := loadUnits(ctx, in.Options, in.Shard)
	if err != nil {
		return nil, err
	}
	ex := NewExecutor(ctx, in.Options, units, in.FailedBefore)
	ex.NotifiedOutside(in.NotifiedBefore)
	ex.TellParent(ctx)
	if err := ex.Register(ctx); err != nil {
		return nil, err
	}
	var out *Outcome
	if in.Compensate {
		out = ex.CompensateAll(ctx)
	} else if out, err = ex.Run(ctx); err != nil {
		return nil, err
	}
	out.Version = ex.Version()
	out.Entries = ex.Progress(0, 1).Entries
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) })
	return out, nil
}

// loadUnits reads a shard's units from the store, its pages at once.
func loadUnits(ctx workflow.Context, opts ExecOptions, sh contract.Shard) ([]contract.Unit, error) {
	actx := workflow.WithActivityOptions(ctx, controlOptions(opts.ControlQueue,
		fmt.Sprintf("load shard %d", sh.Index), 10*time.Minute))
	futs := make([]workflow.Future, max(sh.Pages, 1))
	for p := range futs {
		futs[p] = workflow.ExecuteActivity(actx, contract.LoadUnitsName, contract.LoadUnitsInput{
			ExecutionID: opts.ExecutionID, Shard: sh.Index, Page: p, Paged: sh.Pages > 0})
	}
	units := make([]contract.Unit, 0, sh.Units)
	for _, f := range futs {
		var part []contract.Unit
		if err := f.Get(ctx, &part); err != nil {
			return nil, fmt.Errorf("load shard %d: %w", sh.Index, err)
		}
		units = append(units, part...)
	}
	return units, nil
}

// shardRun runs a sharded plan's shards one after another as children.
type shardRun struct {
	plan     *contract.PreparedPlan
	active   int
	activeID string
	finished int // steps in finished shards
	merged   Outcome
	// versions are the finished shards' final change counters.
	versions []int64
	// entries are the finished shards' counts of progress entries.
	entries []int
	// following is the shard child whose awaiting notes count, noteSeq
	// the last of them taken, childAwaits what it awaits; awaiting shows
	// that on the parent (see awaiting.go).
	following   string
	noteSeq     int
	childAwaits string
	awaiting    awaitingMark
}

func (s *shardRun) childID(execID string, shard int, compensate bool) string {
	if compensate {
		return fmt.Sprintf("%s-undo-%d", execID, shard)
	}
	return ShardWorkflowID(execID, shard)
}

// ShardWorkflowID is the workflow id of shard k (from 0) of the sharded
// execution execID: the child whose progress query answers for the
// shard's steps, running or closed.
func ShardWorkflowID(execID string, k int) string {
	return fmt.Sprintf("%s-shard-%d", execID, k)
}

func (s *shardRun) run(ctx workflow.Context, opts ExecOptions) (*Outcome, error) {
	loopCtx, _ := workflow.NewDisconnectedContext(ctx)
	childCtx, cancelChildren := workflow.WithCancel(loopCtx)
	cancelled := false
	workflow.Go(ctx, func(c workflow.Context) {
		c.Done().Receive(c, nil)
		cancelled = true
		cancelChildren()
	})
	if opts.OnFailure == model.OnFailurePause {
		s.followShards(loopCtx) // only a paused shard has anything to say
	}
	var failedBefore []int
	done := 0
	for k, shard := range s.plan.Shards {
		if cancelled {
			break
		}
		s.active = k
		s.activeID = s.childID(opts.ExecutionID, k, false)
		s.follow(loopCtx, s.activeID)
		workflow.SetCurrentDetails(loopCtx, fmt.Sprintf("shard %d/%d running (%s); %d/%d steps done",
			k+1, len(s.plan.Shards), s.activeID, s.finished, s.plan.Steps))
		cctx := workflow.WithChildOptions(childCtx, workflow.ChildWorkflowOptions{
			WorkflowID:          s.activeID,
			TaskQueue:           opts.ControlQueue,
			WaitForCancellation: true,
			StaticSummary:       fmt.Sprintf("shard %d/%d of %s: %d steps", k+1, len(s.plan.Shards), opts.ExecutionID, shard.Steps),
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var out Outcome
		err := workflow.ExecuteChildWorkflow(cctx, ShardWorkflow, ShardInput{Options: opts, Shard: shard, FailedBefore: failedBefore, NotifiedBefore: s.merged.Notified}).Get(loopCtx, &out)
		s.follow(loopCtx, "")
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", k, err)
		}
		done = k + 1
		s.finished += shard.Steps
		s.versions = append(s.versions, out.Version)
		s.entries = append(s.entries, out.Entries)
		s.merge(&out)
		failedBefore = append(failedBefore, out.FailedUnits...)
		if out.Cancelled {
			cancelled = true
		}
		if out.Failed && opts.OnFailure != model.OnFailureContinue {
			break
		}
	}
	s.activeID = ""
	workflow.SetCurrentDetails(loopCtx, fmt.Sprintf("%d/%d shards run; %d/%d steps done", done, len(s.plan.Shards), s.finished, s.plan.Steps))
	o := &s.merged
	o.Cancelled = o.Cancelled || cancelled
	rollback := (o.Failed && (opts.OnFailure == model.OnFailureRollback || o.RolledBack)) ||
		(o.Cancelled && opts.RollbackOnCancel)
	if rollback {
		// The failing shard rolled itself back; undo the earlier ones,
		// latest first.
		last := done - 1
		if o.Cancelled && !o.RolledBack {
			last = done
		}
		for k := last - 1; k >= 0; k-- {
			if k >= len(s.plan.Shards) {
				continue
			}
			cctx := workflow.WithChildOptions(loopCtx, workflow.ChildWorkflowOptions{
				WorkflowID:    s.childID(opts.ExecutionID, k, true),
				TaskQueue:     opts.ControlQueue,
				StaticSummary: fmt.Sprintf("undo shard %d of %s", k+1, opts.ExecutionID),
				RetryPolicy:   &temporal.RetryPolicy{MaximumAttempts: 1},
			})
			var out Outcome
			err := workflow.ExecuteChildWorkflow(cctx, ShardWorkflow, ShardInput{Options: opts, Shard: s.plan.Shards[k], Compensate: true}).Get(loopCtx, &out)
			if err != nil {
				o.Report.CompensationFailures = append(o.Report.CompensationFailures, model.StepError{Step: fmt.Sprintf("shard %d", k), Error: err.Error()})
				continue
			}
			o.Report.CompensationFailures = append(o.Report.CompensationFailures, out.Report.CompensationFailures...)
			o.RolledBack = o.RolledBack || out.RolledBack
		}
		o.Report.RolledBack = o.RolledBack
	}
	// Shards never started count as skipped.
	for k := done; k < len(s.plan.Shards); k++ {
		for range s.plan.Shards[k].Steps {
			o.Report.Count(model.OutcomeSkipped)
		}
	}
	return o, nil
}

func (s *shardRun) merge(out *Outcome) {
	m := &s.merged
	r := &m.Report
	r.Created += out.Report.Created
	r.Updated += out.Report.Updated
	r.Deleted += out.Report.Deleted
	r.Unchanged += out.Report.Unchanged
	r.Failed += out.Report.Failed
	r.Skipped += out.Report.Skipped
	r.Unknown += out.Report.Unknown
	r.Refreshed += out.Report.Refreshed
	for _, l := range model.LogLevels {
		if n := out.Report.Log[l]; n > 0 {
			if r.Log == nil {
				r.Log = map[model.LogLevel]int{}
			}
			r.Log[l] += n
		}
	}
	r.Failures = append(r.Failures, out.Report.Failures...)
	r.CompensationFailures = append(r.CompensationFailures, out.Report.CompensationFailures...)
	m.Plan.Create += out.Plan.Create
	m.Plan.Update += out.Plan.Update
	m.Plan.Delete += out.Plan.Delete
	m.Plan.Run += out.Plan.Run
	m.Plan.Noop += out.Plan.Noop
	m.Plan.Refresh += out.Plan.Refresh
	m.Notified = append(m.Notified, out.Notified...)
	m.Failed = m.Failed || out.Failed
	m.RolledBack = m.RolledBack || out.RolledBack
	m.Cancelled = m.Cancelled || out.Cancelled
	m.Aborted = m.Aborted || out.Aborted
	if m.Cause == "" {
		m.Cause = out.Cause
	}
	m.MissingEnv = mergeSorted(m.MissingEnv, out.MissingEnv)
	m.MissingSecrets = mergeSorted(m.MissingSecrets, out.MissingSecrets)
}

func mergeSorted(a, b []string) []string {
	set := map[string]bool{}
	for _, k := range a {
		set[k] = true
	}
	for _, k := range b {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func (s *shardRun) progress(execID string, final *Outcome) *model.ProgressPage {
	p := &model.ProgressPage{ExecutionID: execID, Status: model.ExecRunning, Total: s.plan.Steps, Done: s.finished, Steps: []model.StepProgress{}}
	p.Shard = &model.ShardProgress{Shards: len(s.plan.Shards), Active: s.active, WorkflowID: s.activeID, Versions: s.versions, Entries: s.entries}
	if s.childAwaits != "" {
		p.Status, p.Awaiting = model.ExecWaiting, s.childAwaits
	}
	if final != nil {
		p.Status, p.Report = final.Status(), &final.Report
	}
	return p
}
