package main

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	temporal "go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/contract"
)

// histStats is what a phase's histories say.
type histStats struct {
	events, workflows, largest int
	// prepare is the root workflow's PrepareGraph activity, from its
	// scheduling to its completion (0: the phase prepared no graph).
	prepare time.Duration
}

// historyEvents counts the events of a workflow run and of every child
// workflow it started, recursively, how many workflows that is, and the
// events of the largest one (what Temporal's history limits bound); and
// how long the root workflow's graph preparation took.
func historyEvents(ctx context.Context, c temporal.Client, wfID, runID string) (histStats, error) {
	var hs histStats
	queue := [][2]string{{wfID, runID}}
	root := true
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		own := 0
		var prepScheduled int64
		var prepAt time.Time
		it := c.GetWorkflowHistory(ctx, cur[0], cur[1], false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return histStats{}, err
			}
			hs.events++
			own++
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				queue = append(queue, [2]string{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
			}
			if !root {
				continue
			}
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == contract.PrepareGraphName {
				prepScheduled, prepAt = ev.GetEventId(), ev.GetEventTime().AsTime()
			}
			if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && prepScheduled != 0 && a.GetScheduledEventId() == prepScheduled {
				hs.prepare = ev.GetEventTime().AsTime().Sub(prepAt)
			}
		}
		root = false
		hs.workflows++
		hs.largest = max(hs.largest, own)
	}
	return hs, nil
}
