package starter_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// A dry-run through the workflow runs no exec guard: the plan says the
// exec would run unless its guard says otherwise. Asked with RunGuards,
// the guard runs and decides the plan.
func TestDryRunRunsExecGuardsOnlyWhenAsked(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	s := h.stack("guards")
	dir := t.TempDir()
	log := filepath.Join(dir, "guard.log")
	docs := `apiVersion: cairn/v1
kind: Exec
metadata: {name: migrate}
spec: {command: "true", unless: "echo guard >> ` + log + `; true"}
`
	plan := h.dryRun(s.ID, docs)
	mustStatus(t, plan, model.ExecCompleted)
	require.NotNil(t, plan.Plan)
	assert.NoFileExists(t, log, "the dry-run ran the guard")
	assert.Equal(t, 1, plan.Plan.Summary.Run)
	require.Len(t, plan.Plan.Steps, 1)
	step := plan.Plan.Steps[0]
	assert.Equal(t, model.ActionRun, step.Action)
	require.Len(t, step.Changes, 1)
	assert.True(t, strings.HasPrefix(step.Changes[0].New.(string), "would run unless its guard says otherwise"), "%v", step.Changes[0].New)

	asked := h.dryRunWith(s.ID, docs, starter.StackRun{RunGuards: true})
	mustStatus(t, asked, model.ExecCompleted)
	require.NotNil(t, asked.Plan)
	raw, err := os.ReadFile(log)
	require.NoError(t, err, "asked to, the dry-run did not run the guard")
	assert.Equal(t, "guard\n", string(raw))
	assert.Equal(t, 0, asked.Plan.Summary.Run)
	assert.Equal(t, 1, asked.Plan.Summary.Noop)
}
