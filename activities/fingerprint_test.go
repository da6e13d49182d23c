package activities_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
)

// A file whose content is a secret reaches no plan, result or stored
// record as its plain sha256: the fingerprint is keyed, in the dry-run's
// plan and in the apply's outputs alike.
func TestSecretFileFingerprintIsKeyed(t *testing.T) {
	const secret = "correct-horse"
	sum := sha256.Sum256([]byte(secret))
	plain := hex.EncodeToString(sum[:])
	f := newFixtureWith(t, activities.Deps{Secrets: expr.NewSecrets(map[string]string{"pw": secret}, nil)})
	docs := strings.ReplaceAll(`apiVersion: cairn/v1
kind: File
metadata: {name: pw}
spec: {path: ROOT/pw, content: {secretRef: {key: pw}}}
`, "ROOT", f.root)
	ctx := context.Background()
	st := f.stack("")
	hash := f.snapshot(docs)

	dry := f.prepare(contract.PrepareInput{ExecutionID: "exec-fp-plan", Mode: contract.ModeDryRun, StackID: st.ID, SnapshotHash: hash})
	res, err := f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: "exec-fp-plan", Unit: dry.Units[0], Noop: true, SkipGuards: true})
	require.NoError(t, err)
	got := outcomes(res)["file/pw"]
	assert.Equal(t, model.ActionCreate, got.Action)
	found := false
	for _, c := range got.Changes {
		if c.Path == "content" {
			found = true
			assert.True(t, strings.HasPrefix(c.New.(string), "{hmac-sha256}"), "%v", c.New)
		}
	}
	assert.True(t, found, "the plan shows the content's fingerprint: %+v", got.Changes)
	planRec, err := f.st.GetStepData(ctx, "exec-fp-plan", "file/pw", contract.DataPlan)
	require.NoError(t, err)
	assert.NotContains(t, string(planRec), plain)

	apply := f.prepare(contract.PrepareInput{ExecutionID: "exec-fp-apply", StackID: st.ID, SnapshotHash: hash})
	res, err = f.acts.ApplyStep(ctx, contract.UnitInput{ExecutionID: "exec-fp-apply", Unit: apply.Units[0]})
	require.NoError(t, err)
	require.Equal(t, model.OutcomeCreated, outcomes(res)["file/pw"].Outcome)
	raw, err := os.ReadFile(filepath.Join(f.root, "pw"))
	require.NoError(t, err)
	assert.Equal(t, secret, string(raw))
	for _, kind := range []string{contract.DataOutputs, contract.DataBefore} {
		rec, err := f.st.GetStepData(ctx, "exec-fp-apply", "file/pw", kind)
		require.NoError(t, err, kind)
		assert.NotContains(t, string(rec), plain, kind)
	}
	out, err := f.st.GetStepData(ctx, "exec-fp-apply", "file/pw", contract.DataOutputs)
	require.NoError(t, err)
	assert.Contains(t, string(out), "{hmac-sha256}")
}
