package activities_test

import (
	"context"
	"encoding/base64"
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

// A command given a secret that prints it, escaped and encoded, leaves no
// trace of it in the outputs the store keeps, nor in what dependents read.
func TestOutputsRecordedWithSecretsRedacted(t *testing.T) {
	const secret = `pa"ss<wd>-7f3e9c`
	f := newFixtureWith(t, activities.Deps{Secrets: expr.NewSecrets(map[string]string{"pw": secret}, nil)})
	// The command prints the secret verbatim, JSON-escaped and in base64.
	docs := `apiVersion: cairn/v1
kind: Exec
metadata: {name: leak}
spec:
  command: |
    printf '%s\n' "$PW"
    printf '{"p":"%s"}\n' "$(printf '%s' "$PW" | sed 's/"/\\"/g; s/</\\u003c/g; s/>/\\u003e/g')"
    printf '%s' "$PW" | base64
  env: {PW: {secretRef: {key: pw}}}
---
apiVersion: cairn/v1
kind: File
metadata: {name: copy}
spec: {path: ROOT/copy, content: "{{ (dep \"Exec/leak\").stdout }}"}
dependsOn: [Exec/leak]
`
	docs = strings.ReplaceAll(docs, "ROOT", f.root)
	execID := "exec-redact-outputs"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(docs)})
	for _, u := range plan.Units {
		res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u})
		if err != nil {
			res, err = f.acts.ApplyStep(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u})
		}
		require.NoError(t, err)
		for id, r := range outcomes(res) {
			require.NotEqual(t, model.OutcomeFailed, r.Outcome, "%s: %s", id, r.Error)
		}
	}
	raw, err := f.st.GetStepData(context.Background(), execID, "exec/leak", contract.DataOutputs)
	require.NoError(t, err)
	stored := string(raw)
	assert.Contains(t, stored, expr.Redacted)
	for _, trace := range []string{"ss<wd>", `ss\u003cwd\u003e`, base64.StdEncoding.EncodeToString([]byte(secret))[:12]} {
		assert.NotContains(t, stored, trace)
	}
	copied, err := os.ReadFile(filepath.Join(f.root, "copy"))
	require.NoError(t, err)
	assert.NotContains(t, string(copied), "ss<wd>")
	assert.Contains(t, string(copied), expr.Redacted)
}
