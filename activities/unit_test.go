package activities_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// chainDocs is a package whose steps depend on each other: a directory,
// an exec writing into it, a file reading the exec's stdout, and a step
// after that; plus an independent file.
func chainDocs(root, failing string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: Directory
metadata: {name: d}
spec: {path: %[1]s/d}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: mark}
spec: {command: "%[2]s echo ran >> %[1]s/d/mark.log; echo hello"}
dependsOn: [Directory/d]
---
apiVersion: cairn/v1
kind: File
metadata: {name: greeting}
spec: {path: %[1]s/d/greeting, content: "{{ (dep \"Exec/mark\").stdout }}"}
dependsOn: [Exec/mark]
---
apiVersion: cairn/v1
kind: File
metadata: {name: last}
spec: {path: %[1]s/d/last, content: "x"}
dependsOn: [File/greeting]
---
apiVersion: cairn/v1
kind: File
metadata: {name: apart}
spec: {path: %[1]s/apart, content: "y"}
`, root, failing)
}

func outcomes(res *contract.UnitResult) map[string]contract.StepResult {
	res.Expand()
	out := map[string]contract.StepResult{}
	for _, s := range res.Steps {
		out[s.StepID] = s
	}
	return out
}

func TestUnitRunsDependentStepsInOrder(t *testing.T) {
	f := newFixture(t)
	execID := "exec-unit-order"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(chainDocs(f.root, ""))})
	require.Len(t, plan.Units, 1, "one unit holds the whole chain")
	u := plan.Units[0]
	require.Equal(t, 5, u.Count)

	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u})
	require.NoError(t, err)
	got := outcomes(res)
	require.Len(t, got, 5)
	for id, r := range got {
		require.NotEqual(t, model.OutcomeFailed, r.Outcome, "%s: %s", id, r.Error)
	}
	greeting, err := os.ReadFile(filepath.Join(f.root, "d", "greeting"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(greeting), "the file read the exec's output in the same unit")
	require.FileExists(t, filepath.Join(f.root, "d", "last"))
	require.FileExists(t, filepath.Join(f.root, "apart"))

	// Every step's outcome is recorded: a retried attempt runs nothing.
	res, err = f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u, Rerun: true})
	require.NoError(t, err)
	require.Len(t, outcomes(res), 5)
	marks, err := os.ReadFile(filepath.Join(f.root, "d", "mark.log"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(marks), "the command ran once")
}

func TestUnitBlocksTheDependentsOfAFailedStep(t *testing.T) {
	f := newFixture(t)
	execID := "exec-unit-blocked"
	gate := filepath.Join(f.root, "gate")
	docs := chainDocs(f.root, fmt.Sprintf("test -e %s || exit 3;", gate))
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
	require.Len(t, plan.Units, 1)
	u := plan.Units[0]

	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u})
	require.NoError(t, err, "a failed step does not fail the unit's activity")
	got := outcomes(res)
	require.Equal(t, model.OutcomeFailed, got["exec/mark"].Outcome)
	require.Contains(t, got["exec/mark"].Error, "exited 3")
	require.Equal(t, "exec/mark", got["file/greeting"].Blocked)
	require.Equal(t, "exec/mark", got["file/last"].Blocked, "blocked names the step that failed")
	require.Equal(t, model.OutcomeCreated, got["file/apart"].Outcome, "independent steps still run")
	require.Equal(t, model.OutcomeCreated, got["directory/d"].Outcome)
	require.NoFileExists(t, filepath.Join(f.root, "d", "greeting"))

	// The operator fixes the cause and retries: done steps are recalled,
	// the failed one and those it blocked run.
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	res, err = f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u, Rerun: true})
	require.NoError(t, err)
	got = outcomes(res)
	for id, r := range got {
		require.NotEqual(t, model.OutcomeFailed, r.Outcome, id)
		require.Empty(t, r.Blocked, id)
	}
	require.Equal(t, model.OutcomeCreated, got["directory/d"].Outcome, "recalled from the first attempt")
	require.FileExists(t, filepath.Join(f.root, "d", "last"))
}

func TestUnitSkipsWhatTheOperatorSkipped(t *testing.T) {
	f := newFixture(t)
	execID := "exec-unit-skip"
	docs := strings.Replace(chainDocs(f.root, "exit 3;"), `content: "{{ (dep \"Exec/mark\").stdout }}"`, `content: "fixed"`, 1)
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
	u := plan.Units[0]
	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u})
	require.NoError(t, err)
	require.Equal(t, model.OutcomeFailed, outcomes(res)["exec/mark"].Outcome)

	res, err = f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u, Rerun: true, Skip: []string{"exec/mark"}})
	require.NoError(t, err)
	got := outcomes(res)
	require.Equal(t, model.OutcomeSkipped, got["exec/mark"].Outcome)
	require.Empty(t, got["exec/mark"].Blocked)
	require.Equal(t, model.OutcomeCreated, got["file/greeting"].Outcome, "the skipped step's dependents run")
	require.Equal(t, model.OutcomeCreated, got["file/last"].Outcome)
	require.NoFileExists(t, filepath.Join(f.root, "d", "mark.log"))
}

func TestUnitDryRunPlansInOrder(t *testing.T) {
	f := newFixture(t)
	execID := "exec-unit-plan"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, Mode: contract.ModeDryRun, StackID: f.stack("").ID, SnapshotHash: f.snapshot(chainDocs(f.root, ""))})
	u := plan.Units[0]
	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u, Noop: true})
	require.NoError(t, err)
	got := outcomes(res)
	require.Len(t, got, 5)
	require.Equal(t, model.ActionCreate, got["directory/d"].Action)
	require.Equal(t, model.ActionRun, got["exec/mark"].Action)
	require.NoDirExists(t, filepath.Join(f.root, "d"), "a dry-run changes nothing")
}

func TestUnitOrdersByExpressionRefsWithoutDependsOn(t *testing.T) {
	f := newFixture(t)
	execID := "exec-unit-expr-refs"
	// b comes first and names a only in its expression.
	docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: b}
spec: {path: %[1]s/b, content: "{{ (dep \"File/a\").checksum }}"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: a}
spec: {path: %[1]s/a, content: "x"}
`, f.root)
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
	require.Len(t, plan.Units, 1)

	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: plan.Units[0]})
	require.NoError(t, err)
	got := outcomes(res)
	require.Equal(t, model.OutcomeCreated, got["file/a"].Outcome, got["file/a"].Error)
	require.Equal(t, model.OutcomeCreated, got["file/b"].Outcome, got["file/b"].Error)
	b, err := os.ReadFile(filepath.Join(f.root, "b"))
	require.NoError(t, err)
	require.NotEmpty(t, string(b))
	require.NotContains(t, string(b), "{{", "b read a's checksum")
}
