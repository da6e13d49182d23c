package contract

import "github.com/cairn-io/cairn/model"

// Activity names of webhooks and drift checks.
const (
	MatchHooksName        = "MatchHooks"
	DeliverHookName       = "DeliverHook"
	LoadDriftTargetName   = "LoadDriftTarget"
	RecordDriftName       = "RecordDrift"
	RecordDriftRepairName = "RecordDriftRepair"
)

// DataHooks is the step data kind of a stack's webhooks: one record (a
// JSON list of model.Hook, secrets included) under HooksKey of the stack's
// record StackSecretsExecution, sealed by the store like the stack's
// secrets, kept by retention and removed with the stack.
const DataHooks = "hooks"

// HooksKey is the step id of a stack's webhooks record.
const HooksKey = "hooks"

// MatchHooksInput asks which of a stack's hooks want an event.
type MatchHooksInput struct {
	StackID string `json:"stackId"`
	Type    string `json:"type"`
	DryRun  bool   `json:"dryRun,omitempty"`
}

// MatchHooksResult names the hooks that want it (never their URLs or
// secrets: the delivery reads them from the store).
type MatchHooksResult struct {
	HookIDs []string `json:"hookIds"`
}

// DeliverHookInput POSTs one event to one hook of a stack.
type DeliverHookInput struct {
	StackID string          `json:"stackId"`
	HookID  string          `json:"hookId"`
	Event   model.HookEvent `json:"event"`
}

// LoadDriftTargetInput names the stack a drift check runs for.
type LoadDriftTargetInput struct {
	StackID string `json:"stackId"`
}

// LoadDriftTargetResult is what the store says the check compares: the
// package the stack last applied ("" when it never applied one) and
// whether a drift is repaired.
type LoadDriftTargetResult struct {
	SnapshotHash string `json:"snapshotHash"`
	Repair       bool   `json:"repair"`
}

// RecordDriftInput records a drift check: the plan of dry-run
// PlanExecutionID (read from the store), or Error when there is none.
type RecordDriftInput struct {
	StackID         string     `json:"stackId"`
	ExecutionID     string     `json:"executionId"`
	PlanExecutionID string     `json:"planExecutionId,omitempty"`
	CheckedAt       model.Time `json:"checkedAt"`
	Error           string     `json:"error,omitempty"`
}

// RecordDriftResult says whether the stack drifted and names the drifted
// resources (their diffs stay in the store).
type RecordDriftResult struct {
	Drifted   bool     `json:"drifted"`
	Resources []string `json:"resources,omitempty"`
}

// RecordDriftRepairInput adds what a check's repair did to its record.
type RecordDriftRepairInput struct {
	StackID     string            `json:"stackId"`
	ExecutionID string            `json:"executionId"`
	Repair      model.DriftRepair `json:"repair"`
}
