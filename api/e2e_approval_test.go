package api

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// approvalCairn is a Cairn whose API also takes the named token of
// "alice"; client alice uses it.
func approvalCairn(t *testing.T) (*cairn, *client.Client) {
	t.Helper()
	const aliceToken = "alice-t0ken-approves"
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.Tokens = map[string]string{"alice": aliceToken} }})
	alice, err := client.New(h.url, aliceToken)
	require.NoError(t, err)
	return h, alice
}

// planForApproval applies docs to the stack with approve=required and
// returns the plan awaiting approval.
func planForApproval(t *testing.T, c *client.Client, stackID, docs string, timeout time.Duration) *model.Execution {
	t.Helper()
	ex, err := c.Apply(ctxTimeout(t, 3*time.Minute), stackID, &client.Document{Data: []byte(docs), Format: "yaml"},
		client.ApplyOptions{ApproveRequired: true, ApprovalTimeout: timeout})
	require.NoError(t, err)
	require.Equal(t, model.ExecWaiting, ex.Status, "error %q", ex.Error)
	require.Equal(t, "approval", ex.Awaiting)
	require.NotNil(t, ex.Plan)
	require.NotNil(t, ex.Approval)
	require.Equal(t, model.ApprovalAwaiting, ex.Approval.Status)
	return ex
}

// awaitClosed polls the execution until it closed.
func awaitClosed(t *testing.T, c *client.Client, id string) *model.Execution {
	t.Helper()
	var ex *model.Execution
	waitUntil(t, "execution "+id+" closes", func() bool {
		var err error
		ex, err = c.GetExecution(ctxTimeout(t, time.Minute), id)
		require.NoError(t, err)
		return ex.Finished()
	})
	return ex
}

func TestE2EApprovedPlanAppliesWhatItShowed(t *testing.T) {
	h, alice := approvalCairn(t)
	ctx := ctxTimeout(t, 3*time.Minute)
	dir := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "approved"})
	require.NoError(t, err)

	plan := planForApproval(t, h.client, st.ID, filesPackage(dir, "hello\n"), 0)
	assert.Equal(t, model.Summary{Create: 3}, plan.Plan.Summary)
	assert.Len(t, plan.Plan.Steps, 3)
	assert.NoFileExists(t, filepath.Join(dir, "app", "motd"), "a plan awaiting approval changed a file")

	shown, err := h.client.GetExecution(ctx, plan.ID)
	require.NoError(t, err)
	assert.Equal(t, model.ExecWaiting, shown.Status)
	assert.Equal(t, plan.Plan.Summary, shown.Plan.Summary, "GET shows the plan while it waits")

	res, err := alice.Approve(ctx, plan.ID, "ship it")
	require.NoError(t, err)
	assert.Equal(t, model.ApprovalApproved, res.Status)
	assert.Equal(t, "alice", res.By)
	assert.Equal(t, "ship it", res.Comment)
	require.True(t, strings.HasPrefix(res.ApplyExecutionID, "stack-"+st.ID+"."), res.ApplyExecutionID)

	done := awaitClosed(t, h.client, plan.ID)
	mustStatus(t, done, model.ExecCompleted)
	require.NotNil(t, done.Approval)
	assert.Equal(t, "alice", done.Approval.By)
	wantReport(t, done.Report, model.Report{Created: plan.Plan.Summary.Create})
	applied := awaitClosed(t, h.client, res.ApplyExecutionID)
	mustStatus(t, applied, model.ExecCompleted)
	wantReport(t, applied.Report, model.Report{Created: plan.Plan.Summary.Create})

	got, err := os.ReadFile(filepath.Join(dir, "app", "motd"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(got))
	conf, err := os.ReadFile(filepath.Join(dir, "app", "app.conf"))
	require.NoError(t, err)
	assert.Equal(t, "port = 80\n", string(conf))
	rec, err := h.store.GetStack(ctx, st.ID)
	require.NoError(t, err)
	assert.Equal(t, res.ApplyExecutionID, rec.LastExecutionID)
	assert.NotContains(t, h.logs.String(), "alice-t0ken-approves", "the token reached the log")

	_, err = alice.Approve(ctx, plan.ID, "")
	assertStatus(t, err, 409)
}

func TestE2EApprovalRefusedWhenTheStackMoved(t *testing.T) {
	h, alice := approvalCairn(t)
	ctx := ctxTimeout(t, 3*time.Minute)

	t.Run("another apply landed", func(t *testing.T) {
		dir := t.TempDir()
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "moved-by-apply"})
		require.NoError(t, err)
		plan := planForApproval(t, h.client, st.ID, filesPackage(dir, "planned\n"), 0)
		other := h.applyWait(st.ID, filesPackage(dir, "other\n"), client.ApplyOptions{})
		mustStatus(t, other, model.ExecCompleted)

		_, err = alice.Approve(ctx, plan.ID, "")
		apiErr := assertStatus(t, err, 409)
		assert.Contains(t, apiErr.Message, other.ID, "the refusal names the execution that moved the stack")
		got, err := os.ReadFile(filepath.Join(dir, "app", "motd"))
		require.NoError(t, err)
		assert.Equal(t, "other\n", string(got), "a refused approval changed a file")
		ended := awaitClosed(t, h.client, plan.ID)
		mustStatus(t, ended, model.ExecRejected)
		assert.Equal(t, model.ApprovalStale, ended.Approval.Status)
		assert.Contains(t, ended.Approval.Reason, other.ID)
	})

	t.Run("a planned file changed", func(t *testing.T) {
		dir := t.TempDir()
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "moved-by-hand"})
		require.NoError(t, err)
		mustStatus(t, h.applyWait(st.ID, filesPackage(dir, "v1\n"), client.ApplyOptions{}), model.ExecCompleted)
		plan := planForApproval(t, h.client, st.ID, filesPackage(dir, "v2\n"), 0)
		assert.Equal(t, model.Summary{Update: 1, Noop: 2}, plan.Plan.Summary)
		conf := filepath.Join(dir, "app", "app.conf")
		require.NoError(t, os.WriteFile(conf, []byte("edited by hand\n"), 0o644))

		_, err = alice.Approve(ctx, plan.ID, "")
		apiErr := assertStatus(t, err, 409)
		assert.Contains(t, apiErr.Message, "file/conf: planned noop, now update")
		assert.NotContains(t, apiErr.Message, "file/motd", "only what moved is named")
		motd, err := os.ReadFile(filepath.Join(dir, "app", "motd"))
		require.NoError(t, err)
		assert.Equal(t, "v1\n", string(motd), "a refused approval changed a file")
		edited, err := os.ReadFile(conf)
		require.NoError(t, err)
		assert.Equal(t, "edited by hand\n", string(edited))
		mustStatus(t, awaitClosed(t, h.client, plan.ID), model.ExecRejected)
	})
}

func TestE2ERejectedAndExpiredPlansChangeNothing(t *testing.T) {
	h, alice := approvalCairn(t)
	ctx := ctxTimeout(t, 3*time.Minute)

	t.Run("rejected", func(t *testing.T) {
		dir := t.TempDir()
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "rejected"})
		require.NoError(t, err)
		plan := planForApproval(t, h.client, st.ID, filesPackage(dir, "x\n"), 0)
		res, err := alice.Reject(ctx, plan.ID, "not today")
		require.NoError(t, err)
		assert.Equal(t, model.ApprovalRejected, res.Status)
		ended := awaitClosed(t, h.client, plan.ID)
		mustStatus(t, ended, model.ExecRejected)
		assert.Equal(t, "alice", ended.Approval.By)
		assert.Equal(t, "not today", ended.Approval.Comment)
		assert.NoDirExists(t, filepath.Join(dir, "app"))
		_, err = alice.Approve(ctx, plan.ID, "")
		assertStatus(t, err, 409)
	})

	t.Run("expired", func(t *testing.T) {
		dir := t.TempDir()
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "expired"})
		require.NoError(t, err)
		plan := planForApproval(t, h.client, st.ID, filesPackage(dir, "x\n"), 3*time.Second)
		require.NotNil(t, plan.Approval.Deadline)
		ended := awaitClosed(t, h.client, plan.ID)
		mustStatus(t, ended, model.ExecRejected)
		assert.Equal(t, model.ApprovalExpired, ended.Approval.Status)
		assert.NoDirExists(t, filepath.Join(dir, "app"))

		// Listed as rejected, not as completed.
		listed := func(status model.ExecutionStatus) map[string]model.ExecutionStatus {
			list, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Stack: st.ID, Status: status})
			require.NoError(t, err)
			out := map[string]model.ExecutionStatus{}
			for _, e := range list.Executions {
				out[e.ID] = e.Status
			}
			return out
		}
		waitUntil(t, "the expired plan listed as rejected", func() bool { return listed(model.ExecRejected)[plan.ID] == model.ExecRejected })
		assert.NotContains(t, listed(model.ExecCompleted), plan.ID)
	})
}

func TestE2EPlanAwaitingApprovalListedAsWaiting(t *testing.T) {
	h, _ := approvalCairn(t)
	ctx := ctxTimeout(t, 3*time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "listed"})
	require.NoError(t, err)
	plan := planForApproval(t, h.client, st.ID, filesPackage(t.TempDir(), "x\n"), 0)

	var got *model.Execution
	waitUntil(t, "the plan listed as waiting", func() bool {
		list, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Stack: st.ID, Status: model.ExecWaiting})
		require.NoError(t, err)
		for i := range list.Executions {
			if e := &list.Executions[i]; e.ID == plan.ID && e.Awaiting != "" {
				got = e
			}
		}
		return got != nil
	})
	assert.Equal(t, model.ExecWaiting, got.Status)
	assert.Equal(t, "approval", got.Awaiting)
	assert.Equal(t, model.ExecDryRun, got.Kind)
	running, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Stack: st.ID, Status: model.ExecRunning})
	require.NoError(t, err)
	for _, e := range running.Executions {
		assert.NotEqual(t, plan.ID, e.ID, "a plan awaiting approval listed as running")
	}
}

// assertStatus requires err to be an API error with the status.
func assertStatus(t *testing.T, err error, status int) *client.APIError {
	t.Helper()
	var apiErr *client.APIError
	require.True(t, errors.As(err, &apiErr), "error %v is not an API error", err)
	require.Equal(t, status, apiErr.Status, apiErr.Message)
	return apiErr
}
