package contract

import "github.com/cairn-io/cairn/model"

// Activity names of webhooks and drift checks.
const (
	DeliverHooksName      = "DeliverHooks"
	DeliverHookName       = "DeliverHook"
	WantsHooksName        = "WantsHooks"
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

// DeliverHooksInput sends an event to every hook of its stack that wants
// it; DryRun says it is a dry-run's.
type DeliverHooksInput struct {
	Event  model.HookEvent `json:"event"`
	DryRun bool            `json:"dryRun,omitempty"`
}

// DeliverHooksResult names the hooks a first attempt did not reach (never
// their URLs or secrets: a retry reads them from the store).
type DeliverHooksResult struct {
	Failed []string `json:"failed"`
}

// DeliverHookInput POSTs one event to one hook of the event's stack.
type DeliverHookInput struct {
	HookID string          `json:"hookId"`
	Event  model.HookEvent `json:"event"`
}

// LoadDriftTargetInput names the stack a drift check runs for and the
// check (whose parameters record it names after).
type LoadDriftTargetInput struct {
	StackID     string `json:"stackId"`
	ExecutionID string `json:"executionId"`
}

// LoadDriftTargetResult is what the store says the check compares: the
// package the stack last applied ("" when it never applied one), the
// cluster it applied it on ("" for none), the parameters of that apply (a
// ParamsExecution name, "" for none) and whether a drift is repaired. Gone says the stack or its drift record no
// longer exists (its schedule has been deleted); Error says why the check
// cannot compare (the package needs parameters that are no longer kept).
type LoadDriftTargetResult struct {
	SnapshotHash string `json:"snapshotHash"`
	// Base is the stack's last execution when the target was read: a
	// repair applies SnapshotHash only if the stack is still there.
	Base      string `json:"base,omitempty"`
	ClusterID string `json:"clusterId,omitempty"`
	Params    string `json:"params,omitempty"`
	Repair    bool   `json:"repair"`
	// RepairHeld says why a repair asked for may not run by itself: the
	// stack's approval policy (four eyes) wants every apply approved.
	RepairHeld string `json:"repairHeld,omitempty"`
	Gone       bool   `json:"gone,omitempty"`
	Error      string `json:"error,omitempty"`
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

// DriftIDPrefix starts the id of every drift schedule and of the checks
// it starts.
const DriftIDPrefix = "drift-"

// DriftScheduleID is the id of a stack's drift schedule. Temporal starts
// each of its checks under this id, "-" and the time it was due (RFC 3339,
// UTC).
func DriftScheduleID(stackID string) string { return DriftIDPrefix + stackID }
