package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// refreshDocs: a config file notifies a refreshOnly restart; a unit file
// is subscribed to by the restart too, and a reload subscribes to
// nothing that changes (a directory created beforehand by the test).
func refreshDocs(root, conf string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: conf}
spec: {path: %[1]s/app.conf, content: %[2]q}
notify: [Exec/restart]
---
apiVersion: cairn/v1
kind: File
metadata: {name: unit}
spec: {path: %[1]s/app.service, content: "[Service]"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: restart}
spec: {command: "echo restart >> %[1]s/restarts.log", refreshOnly: true}
subscribe: [File/unit]
---
apiVersion: cairn/v1
kind: Directory
metadata: {name: state}
spec: {path: %[1]s/state}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: reload}
spec: {command: "echo reload >> %[1]s/reloads.log", refreshOnly: true}
subscribe: [Directory/state]
`, root, conf)
}

// Inside one unit the activity settles refreshes from its own steps'
// results: two changed sources refresh once, an unchanged source refreshes
// nothing, a retried attempt recalls the refresh rather than running it
// again, and an apply with nothing changed runs no refreshOnly exec.
func TestUnitRefreshesSubscribersInTheUnit(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "state"), 0o755))
	restarts, reloads := filepath.Join(f.root, "restarts.log"), filepath.Join(f.root, "reloads.log")
	hash := f.snapshot(refreshDocs(f.root, "v1"))
	stack := f.stack("")
	plan := f.prepare(contract.PrepareInput{ExecutionID: "exec-refresh-1", StackID: stack.ID, SnapshotHash: hash})
	require.Len(t, plan.Units, 1, "one unit holds sources and subscribers")
	u := plan.Units[0]

	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: "exec-refresh-1", Unit: u})
	require.NoError(t, err)
	got := outcomes(res)
	assert.Equal(t, model.OutcomeCreated, got["file/conf"].Outcome)
	assert.Equal(t, model.OutcomeUpdated, got["exec/restart"].Outcome, got["exec/restart"].Error)
	assert.True(t, got["exec/restart"].Refreshed)
	assert.Equal(t, model.OutcomeUnchanged, got["exec/reload"].Outcome, "its directory existed")
	assert.False(t, got["exec/reload"].Refreshed)
	assert.Equal(t, 1, testenv.CountLines(t, restarts), "two changed sources refresh once")
	assert.Equal(t, 0, testenv.CountLines(t, reloads))

	res, err = f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: "exec-refresh-1", Unit: u, Rerun: true})
	require.NoError(t, err)
	got = outcomes(res)
	assert.True(t, got["exec/restart"].Refreshed, "recalled with its refresh")
	assert.Equal(t, 1, testenv.CountLines(t, restarts), "a retried attempt does not refresh again")

	plan = f.prepare(contract.PrepareInput{ExecutionID: "exec-refresh-2", StackID: stack.ID, SnapshotHash: hash})
	res, err = f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: "exec-refresh-2", Unit: plan.Units[0]})
	require.NoError(t, err)
	got = outcomes(res)
	assert.Equal(t, model.OutcomeUnchanged, got["exec/restart"].Outcome)
	assert.False(t, got["exec/restart"].Refreshed)
	assert.Equal(t, 1, testenv.CountLines(t, restarts), "nothing changed: no refresh")
}

// The executor's word for a source in another unit refreshes the step
// (one step per unit here).
func TestUnitRefreshesWhatTheExecutorNames(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "state"), 0o755))
	plan := f.prepare(contract.PrepareInput{ExecutionID: "exec-refresh-x", StackID: f.stack("").ID,
		SnapshotHash: f.snapshot(refreshDocs(f.root, "v1")), BatchSize: 1})
	var reload contract.Unit
	for _, u := range plan.Units {
		if u.Step == "exec/reload" {
			reload = u
		}
	}
	require.Len(t, reload.Subscriptions, 1)
	res, err := f.acts.ApplyStep(context.Background(), contract.UnitInput{ExecutionID: "exec-refresh-x", Unit: reload})
	require.NoError(t, err)
	assert.False(t, res.Steps[0].Refreshed)
	assert.Equal(t, 0, testenv.CountLines(t, filepath.Join(f.root, "reloads.log")))

	res, err = f.acts.ApplyStep(context.Background(), contract.UnitInput{ExecutionID: "exec-refresh-x", Unit: reload, Refresh: []string{"exec/reload"}})
	require.NoError(t, err)
	assert.True(t, res.Steps[0].Refreshed)
	assert.Equal(t, 1, testenv.CountLines(t, filepath.Join(f.root, "reloads.log")))
}

// A dry-run marks the steps a changed source would refresh in their plan
// step, and runs nothing.
func TestDryRunMarksRefreshInThePlan(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "state"), 0o755))
	execID := "exec-refresh-plan"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, Mode: contract.ModeDryRun, StackID: f.stack("").ID,
		SnapshotHash: f.snapshot(refreshDocs(f.root, "v2"))})
	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: plan.Units[0], Noop: true})
	require.NoError(t, err)
	got := outcomes(res)
	assert.True(t, got["exec/restart"].Refreshed)
	assert.Equal(t, model.ActionRun, got["exec/restart"].Action)
	assert.False(t, got["exec/reload"].Refreshed)
	assert.Equal(t, model.ActionNoop, got["exec/reload"].Action)
	assert.Equal(t, 0, testenv.CountLines(t, filepath.Join(f.root, "restarts.log")), "a dry-run runs nothing")

	planStep := func(id string) model.PlanStep {
		raw, err := f.st.GetStepData(context.Background(), execID, id, contract.DataPlan)
		require.NoError(t, err)
		var ps model.PlanStep
		require.NoError(t, json.Unmarshal(raw, &ps))
		return ps
	}
	assert.True(t, planStep("exec/restart").Refresh)
	assert.False(t, planStep("exec/reload").Refresh)
	assert.False(t, planStep("file/conf").Refresh)
}

// The executor's word is a claim: a step that subscribes to nothing
// outside its unit is not refreshed because the input says so.
func TestUnitIgnoresARefreshClaimForAStepWithoutOutsideSources(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "state"), 0o755))
	plan := f.prepare(contract.PrepareInput{ExecutionID: "exec-refresh-claim", StackID: f.stack("").ID,
		SnapshotHash: f.snapshot(refreshDocs(f.root, "v1"))})
	require.Len(t, plan.Units, 1)
	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: "exec-refresh-claim", Unit: plan.Units[0],
		Refresh: []string{"exec/reload", "file/unit"}})
	require.NoError(t, err)
	got := outcomes(res)
	assert.False(t, got["exec/reload"].Refreshed)
	assert.Equal(t, 0, testenv.CountLines(t, filepath.Join(f.root, "reloads.log")))
}
