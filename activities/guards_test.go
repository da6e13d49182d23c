package activities_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A dry-run unit runs no exec guard unless asked; the plan it records says
// the exec would run unless its guard says otherwise.
func TestDryRunUnitRunsGuardsOnlyWhenAsked(t *testing.T) {
	f := newFixture(t)
	docs := strings.ReplaceAll(`apiVersion: cairn/v1
kind: Exec
metadata: {name: migrate}
spec: {command: "true", unless: "echo guard >> ROOT/guard.log; true"}
`, "ROOT", f.root)
	guardRuns := func() int {
		raw, err := os.ReadFile(filepath.Join(f.root, "guard.log"))
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return strings.Count(string(raw), "\n")
	}
	plan := f.prepare(contract.PrepareInput{ExecutionID: "exec-guards", Mode: contract.ModeDryRun, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
	require.Len(t, plan.Units, 1)
	u := plan.Units[0]

	res, err := f.acts.ApplyStep(context.Background(), contract.UnitInput{ExecutionID: "exec-guards", Unit: u, Noop: true, SkipGuards: true})
	require.NoError(t, err)
	got := outcomes(res)["exec/migrate"]
	assert.Equal(t, model.ActionRun, got.Action)
	require.Len(t, got.Changes, 1)
	assert.Equal(t, "guard", got.Changes[0].Path)
	assert.Contains(t, got.Changes[0].New, "would run unless its guard says otherwise")
	assert.Equal(t, 0, guardRuns(), "a dry-run ran the guard")
	raw, err := f.st.GetStepData(context.Background(), "exec-guards", "exec/migrate", contract.DataPlan)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "would run unless its guard says otherwise")

	asked := f.prepare(contract.PrepareInput{ExecutionID: "exec-guards-asked", Mode: contract.ModeDryRun, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
	res, err = f.acts.ApplyStep(context.Background(), contract.UnitInput{ExecutionID: "exec-guards-asked", Unit: asked.Units[0], Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, outcomes(res)["exec/migrate"].Action, "the guard held")
	assert.Equal(t, 1, guardRuns())
}
