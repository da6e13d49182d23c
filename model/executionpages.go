package model

// ExecutionGraph is the answer of GET /v1/executions/{id}/graph: every step
// of the execution, in package order, with the steps it waits for.
type ExecutionGraph struct {
	Steps []StepDeps `json:"steps"`
}

// ExecutionSteps is the answer of GET /v1/executions/{id}/steps: a page of
// the execution's step states, from Offset, and the number of entries in
// all (the next page starts at Offset+len(Steps) while that is less).
type ExecutionSteps struct {
	Offset  int            `json:"offset"`
	Entries int            `json:"entries"`
	Steps   []StepProgress `json:"steps"`
}
