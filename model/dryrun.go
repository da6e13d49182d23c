package model

// DryRun is the answer of POST /v1/stacks/{id}/dry-run: what an apply
// would do, step by step (pkger's summary and diff), and what the package
// needs that the dry-run was not given.
type DryRun struct {
	ExecutionID    string     `json:"executionId"`
	Summary        Summary    `json:"summary"`
	Diff           []PlanStep `json:"diff"`
	MissingEnvRefs []string   `json:"missingEnvRefs"`
	MissingSecrets []string   `json:"missingSecrets"`
	// MissingVars are the variables the package's expressions read that
	// the dry-run was not given (an apply refuses them with 422).
	MissingVars []string    `json:"missingVars"`
	Failures    []StepError `json:"failures,omitempty"`
}
