package model

// ExecutionGraph is the answer of GET /v1/executions/{id}/graph: every step
// of the execution, in package order, with the steps it waits for.
type ExecutionGraph struct {
	Steps []StepDeps `json:"steps"`
}

// ExecutionSteps is the answer of GET /v1/executions/{id}/steps: a page of
// the execution's step states, from Offset, and the number of entries in
// all (the next page starts at Offset+len(Steps) while that is less).
//
// Asked with ?since=CURSOR instead, Steps are the states of the steps that
// changed after the cursor (all of them for an empty one), Cursor is where
// the next question starts, More says the answer was cut short by its
// bound (ask again at once), Reset that the cursor was not understood and
// the answer starts from the beginning; Offset and Entries are 0. Status,
// Total, Done and Waiting are the execution's at the time of the answer,
// in both forms.
type ExecutionSteps struct {
	Offset  int             `json:"offset"`
	Entries int             `json:"entries"`
	Steps   []StepProgress  `json:"steps"`
	Cursor  string          `json:"cursor,omitempty"`
	More    bool            `json:"more,omitempty"`
	Reset   bool            `json:"reset,omitempty"`
	Status  ExecutionStatus `json:"status,omitempty"`
	Total   int             `json:"total,omitempty"`
	Done    int             `json:"done,omitempty"`
	Waiting []string        `json:"waiting,omitempty"`
}
