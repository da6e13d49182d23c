package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// paramsPackage writes one file per stack whose content comes from an env
// ref and a secret given with the apply.
const paramsPackage = `kind: File
metadata: {name: site}
spec:
  path: %[1]s/site.conf
  content: "site={{ env \"SITE\" }} password={{ secret \"DB_PASSWORD\" }}\n"
`

// TestApplyParamsE2E applies one package to two stacks with different env
// refs and a secret given with the apply: each file has its values, the
// secret is in no workflow history and nowhere in clear in the database,
// and a missing ref is listed by dry-run and refused by apply.
func TestApplyParamsE2E(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cairn.db")
	h := newCairn(t, cairnOptions{dbURL: "sqlite://" + dbPath, sealKey: []byte("per-apply-params-sealing-key-0123")})
	ctx := ctxTimeout(t, 4*time.Minute)
	const secret = "s3cr3t-Pa55-9f2c71d4e8"
	var execs []string
	var prodStack, prodDir, stagingStack, stagingDir string
	for _, site := range []string{"prod", "staging"} {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: site})
		require.NoError(t, err)
		dir := t.TempDir()
		doc := &client.Document{Data: []byte(fmt.Sprintf(paramsPackage, dir)), Format: "yaml"}
		ex, err := h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{Wait: true, Params: model.ApplyParams{
			EnvRefs: map[string]string{"SITE": site}, Secrets: map[string]string{"DB_PASSWORD": secret},
		}})
		require.NoError(t, err)
		mustStatus(t, ex, model.ExecCompleted)
		got, err := os.ReadFile(filepath.Join(dir, "site.conf"))
		require.NoError(t, err)
		assert.Equal(t, "site="+site+" password="+secret+"\n", string(got))
		execs = append(execs, ex.ID)
		if site == "prod" {
			prodStack, prodDir = st.ID, dir
		} else {
			stagingStack, stagingDir = st.ID, dir
		}
	}

	// A later apply without the secret reuses the stack's; a new value
	// replaces it.
	doc := &client.Document{Data: []byte(fmt.Sprintf(paramsPackage, prodDir)), Format: "yaml"}
	ex, err := h.client.Apply(ctx, prodStack, doc, client.ApplyOptions{Wait: true, Params: model.ApplyParams{EnvRefs: map[string]string{"SITE": "prod2"}}})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	got, err := os.ReadFile(filepath.Join(prodDir, "site.conf"))
	require.NoError(t, err)
	assert.Equal(t, "site=prod2 password="+secret+"\n", string(got))
	execs = append(execs, ex.ID)
	const rotated = "r0tat3d-Pa55-5b1e0c"
	ex, err = h.client.Apply(ctx, prodStack, doc, client.ApplyOptions{Wait: true, Params: model.ApplyParams{
		EnvRefs: map[string]string{"SITE": "prod2"}, Secrets: map[string]string{"DB_PASSWORD": rotated}}})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	got, err = os.ReadFile(filepath.Join(prodDir, "site.conf"))
	require.NoError(t, err)
	assert.Equal(t, "site=prod2 password="+rotated+"\n", string(got))
	execs = append(execs, ex.ID)

	t.Run("the secret is in no workflow history", func(t *testing.T) {
		for _, id := range execs {
			wfID, runID := starter.ParseExecutionID(id)
			it := h.temporal.GetWorkflowHistory(ctx, wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			events := 0
			for it.HasNext() {
				ev, err := it.Next()
				require.NoError(t, err)
				raw, err := proto.Marshal(ev)
				require.NoError(t, err)
				assert.False(t, bytes.Contains(raw, []byte(secret)), "history of %s, event %d holds the secret", id, ev.GetEventId())
				assert.False(t, bytes.Contains(raw, []byte(rotated)), "history of %s, event %d holds the secret", id, ev.GetEventId())
				events++
			}
			assert.Positive(t, events)
		}
	})

	t.Run("the secret is nowhere in clear in the database", func(t *testing.T) {
		for _, p := range []string{dbPath, dbPath + "-wal"} {
			raw, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			require.NoError(t, err)
			assert.False(t, bytes.Contains(raw, []byte(secret)), "%s holds the secret in clear", filepath.Base(p))
			assert.False(t, bytes.Contains(raw, []byte(rotated)), "%s holds the secret in clear", filepath.Base(p))
		}
		assert.NotContains(t, h.logs.String(), secret)
		assert.NotContains(t, h.logs.String(), rotated)
	})

	t.Run("a plan reuses the stack's secret and shows none", func(t *testing.T) {
		doc := &client.Document{Data: []byte(fmt.Sprintf(paramsPackage, stagingDir)), Format: "yaml"}
		plan, _, err := h.client.DryRun(ctx, stagingStack, doc, client.DryRunOptions{Params: model.ApplyParams{EnvRefs: map[string]string{"SITE": "staging2"}}})
		require.NoError(t, err)
		require.NotNil(t, plan)
		assert.Empty(t, plan.MissingSecrets)
		assert.Empty(t, plan.MissingEnvRefs)
		assert.Equal(t, 1, plan.Summary.Update, "the content changes with SITE")
		raw, err := json.Marshal(plan)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), secret)
	})

	t.Run("removing the stack deletes its secrets", func(t *testing.T) {
		_, err := h.store.GetStepData(ctx, contract.StackSecretsExecution(prodStack), contract.ParamsKey, contract.DataParams)
		require.NoError(t, err, "the stack keeps its secrets")
		ex, err := h.client.DeleteStack(ctx, prodStack, client.DeleteOptions{Wait: true})
		require.NoError(t, err)
		mustStatus(t, ex, model.ExecCompleted)
		_, err = h.store.GetStepData(ctx, contract.StackSecretsExecution(prodStack), contract.ParamsKey, contract.DataParams)
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("a missing ref: dry-run lists it, apply answers 422 naming it", func(t *testing.T) {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "missing"})
		require.NoError(t, err)
		doc := &client.Document{Data: []byte(fmt.Sprintf(paramsPackage, t.TempDir())), Format: "yaml"}
		params := model.ApplyParams{EnvRefs: map[string]string{"SITE": "prod"}}
		plan, _, err := h.client.DryRun(ctx, st.ID, doc, client.DryRunOptions{Params: params})
		require.NoError(t, err)
		require.NotNil(t, plan)
		assert.Equal(t, []string{"DB_PASSWORD"}, plan.MissingSecrets)
		assert.Empty(t, plan.MissingEnvRefs)

		_, err = h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{Wait: true, Params: params})
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusUnprocessableEntity, apiErr.Status)
		require.Len(t, apiErr.Details, 1)
		assert.Contains(t, apiErr.Details[0].Message, `"DB_PASSWORD"`)

		// Without any parameter, both refs are named.
		_, err = h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{Wait: true})
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusUnprocessableEntity, apiErr.Status)
		var named []string
		for _, d := range apiErr.Details {
			named = append(named, d.Path)
		}
		assert.Equal(t, []string{"envRefs.SITE", "secrets.DB_PASSWORD"}, named)
		applies, err := h.client.ListExecutions(context.Background(), client.ExecutionFilter{Stack: st.ID, Kind: model.ExecApply})
		require.NoError(t, err)
		assert.Empty(t, applies.Executions, "no apply started")
	})
}
