package api

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// TestE2EDecideSeveralSteps pauses an apply on three failed steps and
// answers them over HTTP with fewer requests than steps: malformed targets
// are 400s naming the field, a list with a step that does not wait is a 409
// listing what waits and changes nothing, steps retries two at once and
// all the last one.
func TestE2EDecideSeveralSteps(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	root := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "fleet"})
	require.NoError(t, err)
	flag := filepath.Join(root, "flag")
	var docs string
	for _, n := range []string{"a", "b", "c"} {
		// A timeout of its own makes each step a unit of its own.
		docs += fmt.Sprintf("---\nkind: Exec\nmetadata: {name: %s}\nspec: {command: \"test -f %s\"}\nmeta: {timeout: 60}\n", n, flag)
	}
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(docs), Format: "yaml"}, client.ApplyOptions{OnFailure: model.OnFailurePause})
	require.NoError(t, err)
	waitUntil(t, "three steps wait", func() bool {
		got, err := h.client.GetExecution(ctx, ex.ID)
		return err == nil && got.Status == model.ExecWaiting && got.Progress != nil && len(got.Progress.Waiting) == 3
	})

	for _, tt := range []struct {
		req       model.DecisionRequest
		wantField string
	}{
		{model.DecisionRequest{Action: model.DecisionRetry, Step: "exec/a", All: true}, "step"},
		{model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a"}, All: true}, "steps"},
		{model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a", ""}}, "steps[1]"},
		{model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a", "exec/a"}}, "steps[1]"},
	} {
		_, err := h.client.Decide(ctx, ex.ID, tt.req)
		var apiErr *client.APIError
		require.True(t, errors.As(err, &apiErr), "%+v: %v", tt.req, err)
		assert.Equal(t, http.StatusBadRequest, apiErr.Status, "%+v", tt.req)
		require.Len(t, apiErr.Details, 1, "%+v", tt.req)
		assert.Equal(t, tt.wantField, apiErr.Details[0].Path, "%+v", tt.req)
	}

	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	_, err = h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/a", "exec/nope"}})
	require.True(t, client.IsStatus(err, http.StatusConflict), "%v", err)
	assert.ErrorContains(t, err, `step "exec/nope" is not waiting for a decision (waiting: exec/a, exec/b, exec/c)`)
	got, err := h.client.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	assert.Len(t, got.Progress.Waiting, 3, "a refused decision retried a step")

	res, err := h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry, Steps: []string{"exec/c", "exec/a"}})
	require.NoError(t, err)
	assert.Equal(t, &model.DecisionResult{Steps: []string{"exec/a", "exec/c"}, Action: model.DecisionRetry, Scope: model.DecisionScopeSteps}, res)

	res, err = h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry, All: true})
	require.NoError(t, err)
	assert.Equal(t, &model.DecisionResult{Step: "exec/b", Steps: []string{"exec/b"}, Action: model.DecisionRetry, Scope: model.DecisionScopeSteps}, res)

	done, err := h.client.Wait(ctx, ex.ID, 100*time.Millisecond)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
}
