package api

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// POST /v1/stacks/{id}/dry-run runs no exec guard command unless
// ?guards=true asks for it (the client's RunGuards, `cairn plan
// --run-guards`).
func TestE2EDryRunGuardsOnlyWhenAsked(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	dir := t.TempDir()
	log := filepath.Join(dir, "guard.log")
	doc := &client.Document{Format: "yaml", Data: []byte(`kind: Exec
metadata: {name: migrate}
spec: {command: "true", onlyif: "echo guard >> ` + log + `; false"}
`)}
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "guards"})
	require.NoError(t, err)

	plan, _, err := h.client.DryRun(ctx, st.ID, doc, client.DryRunOptions{})
	require.NoError(t, err)
	require.NotNil(t, plan)
	assert.NoFileExists(t, log, "the dry-run ran the guard")
	assert.Equal(t, 1, plan.Summary.Run)
	require.Len(t, plan.Diff, 1)
	assert.Equal(t, model.ActionRun, plan.Diff[0].Action)
	require.Len(t, plan.Diff[0].Changes, 1)
	assert.Contains(t, plan.Diff[0].Changes[0].New, "would run unless its guard says otherwise")

	plan, _, err = h.client.DryRun(ctx, st.ID, doc, client.DryRunOptions{RunGuards: true})
	require.NoError(t, err)
	require.NotNil(t, plan)
	raw, err := os.ReadFile(log)
	require.NoError(t, err, "asked to, the dry-run did not run the guard")
	assert.Equal(t, "guard\n", string(raw))
	assert.Equal(t, 0, plan.Summary.Run, "onlyif exited 1: nothing would run")
}
