package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// hookReceiver is a webhook endpoint that verifies each delivery's
// signature with the hook's secret and fails the first failFirst ones.
type hookReceiver struct {
	t         *testing.T
	secret    string
	failFirst int

	mu       sync.Mutex
	requests int
	events   []model.HookEvent
	bad      []string
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if r.requests <= r.failFirst {
		http.Error(w, "not yet", http.StatusServiceUnavailable)
		return
	}
	ts := req.Header.Get("X-Cairn-Timestamp")
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	sec, err := strconv.ParseInt(ts, 10, 64)
	if !hmac.Equal([]byte(req.Header.Get("X-Cairn-Signature")), []byte(want)) || err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		r.bad = append(r.bad, string(body))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev model.HookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		r.bad = append(r.bad, string(body))
		return
	}
	r.events = append(r.events, ev)
}

// event returns the first verified event of a type for an execution ("":
// any).
func (r *hookReceiver) event(typ, execID string) (model.HookEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.events {
		if ev.Type == typ && (execID == "" || ev.ExecutionID == execID) {
			return ev, true
		}
	}
	return model.HookEvent{}, false
}

func TestE2EDriftAndHooks(t *testing.T) {
	key := make([]byte, 32)
	h := newCairn(t, cairnOptions{sealKey: key})
	ctx := ctxTimeout(t, 4*time.Minute)
	const secret = "hook-s3cret-value-7f2c"
	recv := &hookReceiver{t: t, secret: secret, failFirst: 2}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)

	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "drifting"})
	require.NoError(t, err)
	views, err := h.client.PutHooks(ctx, st.ID, []model.Hook{{
		URL: srv.URL + "/hook", Secret: secret,
		Events: []string{model.EventExecutionCompleted, model.EventExecutionFailed, model.EventDriftDetected},
	}})
	require.NoError(t, err)
	require.Len(t, views, 1)
	assert.NotEmpty(t, views[0].SecretFingerprint)
	raw, err := json.Marshal(views)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), secret, "the hooks route shows the secret")

	root := t.TempDir()
	target := filepath.Join(root, "motd")
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: motd}\nspec: {path: %s, content: \"hello\\n\"}\n", target)
	applied := h.applyWait(st.ID, pkg, client.ApplyOptions{})
	mustStatus(t, applied, model.ExecCompleted)

	t.Run("the apply's end reaches the hook through two failures", func(t *testing.T) {
		waitUntil(t, "execution.completed delivered", func() bool {
			_, ok := recv.event(model.EventExecutionCompleted, applied.ID)
			return ok
		})
		ev, _ := recv.event(model.EventExecutionCompleted, applied.ID)
		assert.Equal(t, st.ID, ev.StackID)
		assert.Equal(t, model.ExecApply, ev.Kind)
		recv.mu.Lock()
		assert.GreaterOrEqual(t, recv.requests, 3)
		assert.Empty(t, recv.bad)
		recv.mu.Unlock()
	})

	_, err = h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h"})
	require.NoError(t, err)
	sched := h.temporal.ScheduleClient().GetHandle(ctx, contract.DriftScheduleID(st.ID))
	desc, err := sched.Describe(ctx)
	require.NoError(t, err)
	require.Len(t, desc.Schedule.Spec.Intervals, 1)
	assert.Equal(t, time.Hour, desc.Schedule.Spec.Intervals[0].Every)

	check := func(t *testing.T, after string) *model.DriftCheck {
		t.Helper()
		return h.triggerCheck(ctx, t, st.ID, after)
	}

	var first *model.DriftCheck
	t.Run("no drift right after the apply", func(t *testing.T) {
		first = check(t, "")
		assert.False(t, first.Drifted, "%+v", first)
		assert.Empty(t, first.Error)
		assert.Empty(t, first.Resources)
	})

	require.NoError(t, os.WriteFile(target, []byte("changed behind Cairn's back\n"), 0o644))
	var drifted *model.DriftCheck
	t.Run("a changed file is drift, with its diff", func(t *testing.T) {
		drifted = check(t, first.ExecutionID)
		require.True(t, drifted.Drifted, "%+v", drifted)
		require.Len(t, drifted.Resources, 1)
		res := drifted.Resources[0]
		assert.Equal(t, model.ActionUpdate, res.Action)
		assert.Contains(t, res.ID, "motd")
		assert.NotEmpty(t, res.Changes, "no diff")
		assert.Nil(t, drifted.Repair, "repair is off")
		body, err := os.ReadFile(target)
		require.NoError(t, err)
		assert.Equal(t, "changed behind Cairn's back\n", string(body), "a check without repair changed the file")

		waitUntil(t, "drift.detected delivered", func() bool {
			ev, ok := recv.event(model.EventDriftDetected, drifted.ExecutionID)
			return ok && len(ev.Drifted) == 1
		})
		waitUntil(t, "the check's end delivered", func() bool {
			_, ok := recv.event(model.EventExecutionCompleted, drifted.ExecutionID)
			return ok
		})
	})

	t.Run("CairnDrift marks the drifted check in visibility", func(t *testing.T) {
		q := fmt.Sprintf("CairnDrift = true AND CairnStack = '%s'", st.ID)
		waitUntil(t, "visibility lists the drifted check", func() bool {
			resp, err := h.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: q})
			if err != nil || len(resp.GetExecutions()) != 1 {
				return false
			}
			wfID, runID := resp.GetExecutions()[0].GetExecution().GetWorkflowId(), resp.GetExecutions()[0].GetExecution().GetRunId()
			return wfID+"."+runID == drifted.ExecutionID
		})
	})

	t.Run("a running apply makes the repair skip", func(t *testing.T) {
		_, err := h.client.PatchDrift(ctx, st.ID, model.DriftPatch{Repair: ptr(true)})
		require.NoError(t, err)
		// The file waits for the command, so the check sees it changed.
		slow := fmt.Sprintf("kind: Exec\nmetadata: {name: slow}\nspec: {command: \"sleep 4\"}\n---\n"+
			"kind: File\nmetadata: {name: motd}\nspec: {path: %s, content: \"hello\\n\"}\ndependsOn: [Exec/slow]\n", target)
		running, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(slow), Format: "yaml"}, client.ApplyOptions{})
		require.NoError(t, err)
		got := check(t, drifted.ExecutionID)
		require.True(t, got.Drifted)
		require.NotNil(t, got.Repair)
		assert.Equal(t, model.RepairSkipped, got.Repair.Status, "%+v", got.Repair)
		drifted = got
		var done *model.Execution
		waitUntil(t, "the slow apply ends", func() bool {
			done, err = h.client.GetExecution(ctx, running.ID)
			return err == nil && done.Finished()
		})
		mustStatus(t, done, model.ExecCompleted)
	})

	t.Run("with repair on the file is restored", func(t *testing.T) {
		require.NoError(t, os.WriteFile(target, []byte("changed again\n"), 0o644))
		got := check(t, drifted.ExecutionID)
		require.True(t, got.Drifted, "%+v", got)
		require.NotNil(t, got.Repair)
		assert.Equal(t, model.RepairApplied, got.Repair.Status, "%+v", got.Repair)
		body, err := os.ReadFile(target)
		require.NoError(t, err)
		assert.Equal(t, "hello\n", string(body))
		drifted = got
	})

	t.Run("pause and unpause are Temporal's", func(t *testing.T) {
		d, err := h.client.PatchDrift(ctx, st.ID, model.DriftPatch{Paused: ptr(true)})
		require.NoError(t, err)
		assert.True(t, d.Paused)
		assert.True(t, d.Repair, "a patch of paused kept repair")
		waitUntil(t, "the schedule is paused", func() bool {
			desc, err := sched.Describe(ctx)
			return err == nil && desc.Schedule.State.Paused
		})
		d, err = h.client.PatchDrift(ctx, st.ID, model.DriftPatch{Paused: ptr(false)})
		require.NoError(t, err)
		assert.False(t, d.Paused)
		waitUntil(t, "the schedule is unpaused", func() bool {
			desc, err := sched.Describe(ctx)
			return err == nil && !desc.Schedule.State.Paused
		})
	})

	t.Run("the secret is nowhere in the histories", func(t *testing.T) {
		for _, id := range []string{applied.ID, drifted.ExecutionID, drifted.Repair.ExecutionID} {
			wfID, runID := starter.ParseExecutionID(id)
			iter := h.temporal.GetWorkflowHistory(ctx, wfID, runID, false, 0)
			n := 0
			for iter.HasNext() {
				ev, err := iter.Next()
				require.NoError(t, err)
				b, err := json.Marshal(ev)
				require.NoError(t, err)
				assert.False(t, bytes.Contains(b, []byte(secret)), "history of %s holds the secret", id)
				n++
			}
			assert.Positive(t, n, id)
		}
	})

	t.Run("delete removes the schedule", func(t *testing.T) {
		require.NoError(t, h.client.DeleteDrift(ctx, st.ID))
		_, err := sched.Describe(ctx)
		require.Error(t, err)
		_, err = h.client.GetDrift(ctx, st.ID)
		assert.True(t, client.IsStatus(err, http.StatusNotFound), "%v", err)
		assert.True(t, client.IsStatus(h.client.DeleteDrift(ctx, st.ID), http.StatusNotFound))
	})
}

func TestE2EDriftAndHooksRefuseBadInput(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "refusing"})
	require.NoError(t, err)
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"interval too short", func() error {
			_, err := h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "10ms"})
			return err
		}, "every"},
		{"unknown overlap", func() error {
			_, err := h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1m", Overlap: "sometimes"})
			return err
		}, "overlap"},
		{"file URL hook", func() error {
			_, err := h.client.PutHooks(ctx, st.ID, []model.Hook{{URL: "file:///etc/passwd", Events: []string{model.EventDriftDetected}}})
			return err
		}, "hooks[0].url"},
		{"unknown event", func() error {
			_, err := h.client.PutHooks(ctx, st.ID, []model.Hook{{URL: "https://example.com/", Events: []string{"stack.exploded"}}})
			return err
		}, "hooks[0].events[0]"},
		{"malformed hook id", func() error {
			_, err := h.client.PutHooks(ctx, st.ID, []model.Hook{{ID: "Not An Id", URL: "https://example.com/", Events: []string{model.EventDriftDetected}}})
			return err
		}, "hooks[0].id"},
		{"hook id given twice", func() error {
			_, err := h.client.PutHooks(ctx, st.ID, []model.Hook{
				{ID: "ops", URL: "https://a.example/", Events: []string{model.EventDriftDetected}},
				{ID: "ops", URL: "https://b.example/", Events: []string{model.EventDriftDetected}},
			})
			return err
		}, "hooks[1].id"},
		{"secret without a sealing key", func() error {
			_, err := h.client.PutHooks(ctx, st.ID, []model.Hook{{URL: "https://example.com/", Events: []string{model.EventDriftDetected}, Secret: "s"}})
			return err
		}, "hooks[0].secret"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.True(t, client.IsStatus(err, http.StatusUnprocessableEntity), "%v", err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	_, err = h.client.SetDrift(ctx, "no-such-stack", model.DriftSettings{Every: "1m"})
	assert.True(t, client.IsStatus(err, http.StatusNotFound), "%v", err)
	_, err = h.client.GetDrift(ctx, st.ID)
	assert.True(t, client.IsStatus(err, http.StatusNotFound), "%v", err)
}

func ptr[T any](v T) *T { return &v }

// triggerCheck triggers the stack's drift schedule and waits for a check
// newer than after to be recorded (with its repair, when repair is on).
func (h *cairn) triggerCheck(ctx context.Context, t *testing.T, stackID, after string) *model.DriftCheck {
	t.Helper()
	sched := h.temporal.ScheduleClient().GetHandle(ctx, contract.DriftScheduleID(stackID))
	// Temporal names a check after the second it is due in, and the
	// schedule may not have seen the last check end yet: trigger in a new
	// second, whatever the overlap policy says.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	require.NoError(t, sched.Trigger(ctx, tclient.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL}))
	var last *model.DriftCheck
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		d, err := h.client.GetDrift(ctx, stackID)
		require.NoError(t, err)
		if l := d.LastCheck; l != nil && l.ExecutionID != after && (!l.Drifted || !d.Repair || l.Repair != nil) {
			last = l
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.NotNil(t, last, "no drift check recorded")
	return last
}
