package model

import (
	"fmt"
	"slices"
)

// DecisionRequest is an operator's answer to a paused execution: the body
// of POST /v1/executions/{id}/decision and the argument of the workflows'
// "decision" Update. It names the waiting steps it applies to with at most
// one of Step (one step), Steps (several) or All (every step waiting when
// it arrives); naming none means the first waiting step. A request naming
// a step that does not wait applies to none of them.
type DecisionRequest struct {
	Action Decision `json:"action"`
	Step   string   `json:"step,omitempty"`
	Steps  []string `json:"steps,omitempty"`
	All    bool     `json:"all,omitempty"`
	// By is who decided: set by the API from the request's token, never
	// taken from a body.
	By string `json:"by,omitempty"`
	// Nonce is the one-time nonce the starter recorded for this decision
	// on the execution, with By: the workflow takes who decided from the
	// store's record of it, By being only what the sender claims.
	Nonce string `json:"nonce,omitempty"`
}

// DecisionFieldError is a DecisionRequest that names its steps wrongly,
// with the JSON field at fault.
type DecisionFieldError struct {
	Field   string
	Message string
}

func (e *DecisionFieldError) Error() string { return e.Field + ": " + e.Message }

// CheckTarget reports a request that names its steps in more than one way,
// or lists an empty or repeated step in Steps, as a *DecisionFieldError.
func (r DecisionRequest) CheckTarget() error {
	ways := 0
	for _, set := range []bool{r.Step != "", r.Steps != nil, r.All} {
		if set {
			ways++
		}
	}
	if ways > 1 {
		field := "steps"
		if r.Step != "" {
			field = "step"
		}
		return &DecisionFieldError{Field: field, Message: "give one of step, steps or all"}
	}
	if r.Steps != nil && len(r.Steps) == 0 {
		return &DecisionFieldError{Field: "steps", Message: "lists no step"}
	}
	for k, s := range r.Steps {
		if s == "" {
			return &DecisionFieldError{Field: fmt.Sprintf("steps[%d]", k), Message: "is empty"}
		}
		if slices.Contains(r.Steps[:k], s) {
			return &DecisionFieldError{Field: fmt.Sprintf("steps[%d]", k), Message: fmt.Sprintf("repeats %q", s)}
		}
	}
	return nil
}

// DecisionScope says what a decision acted on: the steps it names (retry,
// skip) or the whole execution (rollback, abort).
type DecisionScope string

const (
	DecisionScopeSteps     DecisionScope = "steps"
	DecisionScopeExecution DecisionScope = "execution"
)

// DecisionResult says which waiting steps a decision was applied to, in
// unit order: Step is set when it was one step, Steps always. Scope is
// "execution" for rollback and abort, which stop the whole execution and
// fail every step still waiting, named or not.
type DecisionResult struct {
	Step   string        `json:"step,omitempty"`
	Steps  []string      `json:"steps"`
	Action Decision      `json:"action"`
	Scope  DecisionScope `json:"scope"`
}
