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
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/stepdata"
	"github.com/cairn-io/cairn/store"
)

// effectDocs is a package of four commands, each appending to its own
// log: one bare, one guarded by creates, one declared idempotent and one
// that fails until gate exists.
func effectDocs(root string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: Exec
metadata: {name: bare}
spec: {command: "echo ran >> %[1]s/bare.log"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: guarded}
spec: {command: "echo ran >> %[1]s/guarded.log; touch %[1]s/guarded.done", creates: %[1]s/guarded.done}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: repeatable}
spec: {command: "echo ran >> %[1]s/repeatable.log"}
meta: {idempotent: true}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: gated}
spec: {command: "echo ran >> %[1]s/gated.log; test -e %[1]s/gate"}
`, root)
}

func (f *fixture) started(execID, stepID string) (stepdata.Started, bool) {
	f.t.Helper()
	raw, err := f.st.GetStepData(context.Background(), execID, stepID, contract.DataStarted)
	if err != nil {
		require.ErrorIs(f.t, err, store.ErrNotFound)
		return stepdata.Started{}, false
	}
	var s stepdata.Started
	require.NoError(f.t, json.Unmarshal(raw, &s))
	return s, true
}

func (f *fixture) runs(name string) int {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, name+".log"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(f.t, err)
	return len(b) / len("ran\n")
}

// Only a command that is not safe to repeat gets a start marker, before it
// runs; one that fails has it marked ended, so that retrying the failure
// runs it again.
func TestStartMarkersOnlyForCommandsNotSafeToRepeat(t *testing.T) {
	f := newFixture(t)
	execID := "exec-started"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(effectDocs(f.root))})
	require.Len(t, plan.Units, 1)
	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: plan.Units[0], HoldsUnknown: true})
	require.NoError(t, err)
	got := outcomes(res)
	assert.Equal(t, model.OutcomeUpdated, got["exec/bare"].Outcome)
	assert.Equal(t, model.OutcomeFailed, got["exec/gated"].Outcome)

	tests := []struct {
		step        string
		marked, end bool
	}{
		{step: "exec/bare", marked: true},
		{step: "exec/guarded"},
		{step: "exec/repeatable"},
		{step: "exec/gated", marked: true, end: true},
	}
	for _, tt := range tests {
		s, ok := f.started(execID, tt.step)
		assert.Equal(t, tt.marked, ok, "%s: start marker", tt.step)
		assert.Equal(t, tt.end, s.Ended, "%s: marked ended", tt.step)
	}

	// The operator's retry of the failure runs it again (and nothing else).
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "gate"), nil, 0o644))
	res, err = f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: plan.Units[0], Rerun: true, HoldsUnknown: true})
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeUpdated, outcomes(res)["exec/gated"].Outcome)
	for name, want := range map[string]int{"bare": 1, "guarded": 1, "repeatable": 1, "gated": 2} {
		assert.Equal(t, want, f.runs(name), "%s ran", name)
	}
}

// A command whose start marker has no outcome beside it, left by another
// activity: skipped by the operator it is taken as done and recorded so,
// without running; retried by the operator it runs once more.
func TestDecisionsOnACommandWhoseOutcomeIsUnknown(t *testing.T) {
	tests := []struct {
		name        string
		skip        bool
		wantOutcome model.Outcome
		wantRuns    int
	}{
		{name: "skip takes it as done", skip: true, wantOutcome: model.OutcomeUpdated, wantRuns: 0},
		{name: "retry runs it again", wantOutcome: model.OutcomeUpdated, wantRuns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			execID := "exec-unknown"
			docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: Exec
metadata: {name: bare}
spec: {command: "echo ran >> %[1]s/bare.log"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: after}
spec: {path: %[1]s/after, content: "x"}
dependsOn: [Exec/bare]
`, f.root)
			plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
			require.Len(t, plan.Units, 1)
			// What an attempt cut off between the command's start and its
			// outcome's record leaves: the marker, no outputs.
			raw, err := json.Marshal(stepdata.Started{By: "earlier-run/7"})
			require.NoError(t, err)
			require.NoError(t, f.st.PutStepData(context.Background(), execID, "exec/bare", contract.DataStarted, raw))

			in := contract.UnitInput{ExecutionID: execID, Unit: plan.Units[0], Rerun: true, HoldsUnknown: true}
			if tt.skip {
				in.Skip = []string{"exec/bare"}
			}
			res, err := f.acts.ApplyBatch(context.Background(), in)
			require.NoError(t, err)
			got := outcomes(res)
			assert.Equal(t, tt.wantOutcome, got["exec/bare"].Outcome)
			assert.Equal(t, model.ActionRun, got["exec/bare"].Action)
			assert.Equal(t, model.OutcomeCreated, got["file/after"].Outcome, "its dependent runs")
			assert.Equal(t, tt.wantRuns, f.runs("bare"))

			var out stepdata.Outputs
			raw, err = f.st.GetStepData(context.Background(), execID, "exec/bare", contract.DataOutputs)
			require.NoError(t, err, "the outcome is recorded")
			require.NoError(t, json.Unmarshal(raw, &out))
			assert.Equal(t, tt.wantOutcome, out.Outcome)

			// Recorded: a later attempt runs nothing again.
			in.Skip = nil
			_, err = f.acts.ApplyBatch(context.Background(), in)
			require.NoError(t, err)
			assert.Equal(t, tt.wantRuns, f.runs("bare"))
		})
	}
}
