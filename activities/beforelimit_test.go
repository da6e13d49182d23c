package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
)

// A before-state over the limit is not kept: the dry-run and the step's
// result say the step has no byte-exact rollback, the store holds no copy
// of the old bytes, and the rollback reports that it cannot restore the
// file (and how to) instead of restoring something else or succeeding
// silently. A step under the limit is restored as before.
func TestBeforeStateOverTheLimitIsNotKept(t *testing.T) {
	ctx := context.Background()
	const limit = 4 << 10
	f := newFixture(t)
	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	f.acts = activities.New(activities.Deps{Store: f.st, Registry: reg, Packages: prepare.GraphsLoader{}, BeforeStateLimit: limit})

	big, small := filepath.Join(f.root, "big"), filepath.Join(f.root, "small")
	oldBig := strings.Repeat("precious line\n", 2*limit/14)
	require.NoError(t, os.WriteFile(big, []byte(oldBig), 0o644))
	require.NoError(t, os.WriteFile(small, []byte("old"), 0o644))
	docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: big}
spec: {path: %s, content: new}
---
apiVersion: cairn/v1
kind: File
metadata: {name: small}
spec: {path: %s, content: new}
`, big, small)
	hash := f.snapshot(docs)
	s := f.stack("")

	// The dry-run says it.
	dry := f.prepare(contract.PrepareInput{ExecutionID: "dry", Mode: contract.ModeDryRun, StackID: s.ID, SnapshotHash: hash})
	for _, u := range dry.Units {
		run := f.acts.ApplyStep
		if u.Batch {
			run = f.acts.ApplyBatch
		}
		_, err := run(ctx, contract.UnitInput{ExecutionID: "dry", Unit: u, Noop: true})
		require.NoError(t, err)
	}
	planNote := func(step string) string {
		raw, err := f.st.GetStepData(ctx, "dry", step, contract.DataPlan)
		require.NoError(t, err)
		var ps model.PlanStep
		require.NoError(t, json.Unmarshal(raw, &ps))
		require.Equal(t, model.ActionUpdate, ps.Action)
		return ps.Note
	}
	assert.Contains(t, planNote("file/big"), "no byte-exact rollback")
	assert.Empty(t, planNote("file/small"))

	// The apply says it on the step and keeps no copy of the old bytes.
	plan := f.prepare(contract.PrepareInput{ExecutionID: "apply", StackID: s.ID, SnapshotHash: hash})
	res := f.run("apply", plan)
	require.Equal(t, model.OutcomeUpdated, res["file/big"].Outcome)
	assert.Contains(t, res["file/big"].Note, "no byte-exact rollback")
	assert.Empty(t, res["file/small"].Note)
	kept, err := f.st.GetStepData(ctx, "apply", "file/big", contract.DataBefore)
	require.NoError(t, err)
	assert.Less(t, len(kept), limit)
	assert.NotContains(t, string(kept), "precious")

	// The rollback says it cannot restore the big file and leaves it.
	var comp []contract.CompensationResult
	for _, u := range plan.Units {
		out, err := f.acts.Compensate(ctx, contract.CompensateInput{ExecutionID: "apply", Unit: u})
		require.NoError(t, err)
		comp = append(comp, out.Steps...)
	}
	byStep := map[string]contract.CompensationResult{}
	for _, c := range comp {
		byStep[c.StepID] = c
	}
	assert.False(t, byStep["file/big"].Undone)
	assert.Contains(t, byStep["file/big"].Error, "cannot restore")
	assert.Contains(t, byStep["file/big"].Error, big)
	assert.True(t, byStep["file/small"].Undone, "%+v", byStep["file/small"])
	assert.Empty(t, byStep["file/small"].Error)
	b, err := os.ReadFile(big)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b), "the big file is left as the apply made it")
	b, err = os.ReadFile(small)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b), "the small file is restored")
}
