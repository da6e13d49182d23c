package main

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	temporal "go.temporal.io/sdk/client"
)

// historyEvents counts the events of a workflow run and of every child
// workflow it started, recursively, how many workflows that is, and the
// events of the largest one (what Temporal's history limits bound).
func historyEvents(ctx context.Context, c temporal.Client, wfID, runID string) (events, workflows, largest int, err error) {
	queue := [][2]string{{wfID, runID}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		own := 0
		it := c.GetWorkflowHistory(ctx, cur[0], cur[1], false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return 0, 0, 0, err
			}
			events++
			own++
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				queue = append(queue, [2]string{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
			}
		}
		workflows++
		largest = max(largest, own)
	}
	return events, workflows, largest, nil
}
