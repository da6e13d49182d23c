package starter

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// Following an execution costs, per poll, what changed rather than every
// step: the progress query is asked for the changes after the follower's
// cursor (see workflows.ProgressSince). A sharded execution's cursor holds
// one version per shard; a finished shard whose final version the parent
// lists and the cursor already holds is not asked again, so a poll is a
// describe, the parent's query and the running shard's.

// queryProgress asks workflow wfID's progress query (run runID, "" the
// latest), counts the question and gives each step its log.
func (s *Starter) queryProgress(ctx context.Context, wfID, runID string, offset, limit int, since *workflows.ProgressSince) (*model.ProgressPage, error) {
	s.progressQueries.Add(1)
	args := []any{offset, limit}
	if since != nil {
		args = append(args, since)
	}
	v, err := s.c.QueryWorkflow(ctx, wfID, runID, workflows.ProgressQuery, args...)
	if err != nil {
		return nil, err
	}
	var p model.ProgressPage
	if err := v.Get(&p); err != nil {
		return nil, fmt.Errorf("progress of %s: %w", wfID, err)
	}
	// A step's log is derived from its state (model.StepLog): made here,
	// where every answer passes, rather than carried in the query's.
	for i := range p.Steps {
		p.Steps[i].Log = model.StepLog(&p.Steps[i])
	}
	return &p, nil
}

// ProgressQueries counts the progress queries this starter has asked, of
// executions and of their shards, for metrics and tests.
func (s *Starter) ProgressQueries() int64 { return s.progressQueries.Load() }

// DescribeSince describes an execution as Describe does, but its Steps are
// the states of the steps that changed after cursor (every step for ""),
// one bounded answer of them, and its Progress carries the next Cursor and
// More when the answer was cut short. It refuses a cursor it did not give
// with ErrBadCursor. Cost: a describe and one progress query (a sharded
// execution: the parent's, the running shard's, and a finished shard's
// only while the cursor is behind it); a closed execution's result once
// it closed.
func (s *Starter) DescribeSince(ctx context.Context, id, cur string) (*Execution, error) {
	c, err := parseCursor(cur)
	if err != nil {
		return nil, err
	}
	return s.describe(ctx, id, func(wfID, runID string) (*model.ProgressPage, error) {
		return s.progressSince(ctx, wfID, runID, c, 0)
	})
}

// StepsSince answers the states of the steps that changed after cursor,
// at most limit (0: as many as fit in one answer), with the next cursor;
// see DescribeSince. It refuses, with ErrNotFound, a workflow that is not
// one of Cairn's executions.
func (s *Starter) StepsSince(ctx context.Context, id, cur string, limit int) (*model.ProgressPage, error) {
	c, err := parseCursor(cur)
	if err != nil {
		return nil, err
	}
	wfID, _, info, err := s.describeOurs(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.progressSince(ctx, wfID, info.GetExecution().GetRunId(), c, limit)
}

func (s *Starter) progressSince(ctx context.Context, wfID, runID string, c cursor, limit int) (*model.ProgressPage, error) {
	if limit <= 0 || limit > workflows.MaxProgressSteps {
		limit = workflows.MaxProgressSteps
	}
	since := int64(0)
	if !c.sharded {
		since = c.at(0)
	}
	p, err := s.queryProgress(ctx, wfID, runID, 0, limit, &workflows.ProgressSince{Version: since})
	if err != nil {
		return nil, notFoundOr(err, ExecutionID(wfID, runID))
	}
	if p.Shard != nil && p.Shard.Shards > 0 {
		if !c.sharded {
			c = cursor{sharded: true} // read before the plan was sharded
		}
		s.shardChanges(ctx, p, c, limit)
		return p, nil
	}
	if p.Version == 0 && p.Entries > 0 {
		// A worker that predates versions answered a first page.
		p.Reset = true
	}
	p.Cursor = cursor{versions: []int64{p.Version}}.String()
	return p, nil
}

// shardChanges fills a sharded execution's answer from its shards: the
// changes of each shard after the cursor's version for it, in shard
// order, until the answer is full (More, and the cursor stops there). The
// running shard also says what runs and waits. A finished shard is asked
// only while the cursor is behind its final version; its answers are kept
// (shardPage's cache), since they no longer change.
func (s *Starter) shardChanges(ctx context.Context, p *model.ProgressPage, c cursor, limit int) {
	last := min(p.Shard.Active, p.Shard.Shards-1) // later shards have not started
	next := cursor{sharded: true, versions: make([]int64, last+1)}
	p.Steps = []model.StepProgress{}
	size := 0
	stopped := -1 // the shard the answer stopped at
	for k := 0; k <= last; k++ {
		from := c.at(k)
		next.versions[k] = from
		if stopped >= 0 {
			continue
		}
		id := workflows.ShardWorkflowID(p.ExecutionID, k)
		running := id == p.Shard.WorkflowID
		final := int64(0)
		if k < len(p.Shard.Versions) {
			final = p.Shard.Versions[k]
		}
		if !running && final > 0 && from == final {
			continue // read to its end already
		}
		if len(p.Steps) >= limit || size >= workflows.MaxProgressBytes {
			stopped = k
			continue
		}
		child, ok := s.shardSince(ctx, id, from, limit-len(p.Steps), !running && (final > 0 || k < p.Shard.Active))
		if !ok {
			continue // a shard the execution never reached
		}
		for i := range child.Steps {
			size += workflows.ApproxStepSize(&child.Steps[i])
		}
		p.Steps = append(p.Steps, child.Steps...)
		next.versions[k] = child.Version
		p.Reset = p.Reset || child.Reset
		if running {
			p.Waiting, p.Running = child.Waiting, child.Running
			p.Done += child.Done
			if len(child.Waiting) > 0 {
				p.Status, p.Awaiting = model.ExecWaiting, workflows.AwaitingDecision
			}
		}
		if child.More {
			stopped = k
		}
	}
	p.More = stopped >= 0
	p.Cursor = next.String()
}

// shardSince is shard id's changes after version since; a finished
// shard's are kept like its pages. ok is false when the shard does not
// answer (the execution never reached it).
func (s *Starter) shardSince(ctx context.Context, id string, since int64, want int, finished bool) (*model.ProgressPage, bool) {
	key := fmt.Sprintf("%s\x00since\x00%d\x00%d", id, since, want)
	if finished {
		if page, ok := s.closedShards.Get(key); ok {
			return page, true
		}
	}
	page, err := s.queryProgress(ctx, id, "", 0, want, &workflows.ProgressSince{Version: since})
	if err != nil {
		return nil, false
	}
	if finished {
		s.closedShards.Put(key, page)
	}
	return page, true
}

// WaitClosed blocks until the execution closes (or ctx ends): a long poll
// on its result, which it does not read (a failed or cancelled execution
// closed all the same). Cost: one long poll.
func (s *Starter) WaitClosed(ctx context.Context, id string) error {
	wfID, runID := ParseExecutionID(id)
	if err := s.c.GetWorkflow(ctx, wfID, runID).Get(ctx, nil); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}
