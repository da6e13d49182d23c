package model

// ProgressPage is the answer of an execution's "progress" query and of
// GET /v1/executions/{id}/steps: the execution's status, its step counts
// and one page of its step states, from Offset. Entries counts the step
// states there are in all; a caller pages on with Offset. The workflow
// keeps a page far below Temporal's payload limit (about a megabyte).
//
// Asked for the changes since a version instead, the page lists the
// entries of the units that changed after it, oldest change first, and
// Version is where the next question starts: the execution's change
// counter when the answer holds every change (More false), else the
// version of the last unit listed. Cursor is the same for the whole
// execution as the starter merges it (opaque; one version per shard).
type ProgressPage struct {
	ExecutionID string          `json:"executionId"`
	Status      ExecutionStatus `json:"status"`
	Total       int             `json:"total"`   // steps
	Done        int             `json:"done"`    // steps finished
	Running     int             `json:"running"` // units in flight
	Waiting     []string        `json:"waiting,omitempty"`
	// Awaiting is "decision" while a step waits for one, "approval"
	// while a plan does; Approval where a plan's approval stands.
	Awaiting string         `json:"awaiting,omitempty"`
	Approval *Approval      `json:"approval,omitempty"`
	Offset   int            `json:"offset"`
	Entries  int            `json:"entries"` // step entries in all
	Steps    []StepProgress `json:"steps"`
	Report   *Report        `json:"report,omitempty"`
	// Shard is set on a sharded execution: the running shard's workflow
	// answers for its steps and takes decisions.
	Shard *ShardProgress `json:"shard,omitempty"`
	// Version, More and Reset answer a question for changes: see above.
	// Reset says the version asked for was not one of this execution's
	// (newer than its counter), so the answer starts from the beginning.
	Version int64  `json:"version,omitempty"`
	More    bool   `json:"more,omitempty"`
	Reset   bool   `json:"reset,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

// ShardProgress says where a sharded execution is: Active counts from 0
// among Shards, and WorkflowID is the running shard's child workflow,
// whose own progress query lists its steps.
//
// Versions holds the final change counter of each shard that finished, in
// shard order, 0 where a shard did not say (one run before versions):
// a caller whose cursor is there already need not ask that shard again.
type ShardProgress struct {
	Shards     int     `json:"shards"`
	Active     int     `json:"active"`
	WorkflowID string  `json:"workflowId,omitempty"`
	Versions   []int64 `json:"versions,omitempty"`
	// Entries holds the count of progress entries of each shard that
	// finished, in shard order, 0 where a shard did not say (one run
	// before counts): a page of steps queries only the shards it takes
	// steps from.
	Entries []int `json:"entries,omitempty"`
}
