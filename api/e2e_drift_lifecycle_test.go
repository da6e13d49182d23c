package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// scheduleGone reports whether Temporal no longer has the stack's drift
// schedule.
func (h *cairn) scheduleGone(ctx context.Context, stackID string) bool {
	_, err := h.temporal.ScheduleClient().GetHandle(ctx, contract.DriftScheduleID(stackID)).Describe(ctx)
	var nf *serviceerror.NotFound
	return err != nil && errors.As(err, &nf)
}

func TestE2EDriftScheduleGoesWithItsStack(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)

	t.Run("deleting the stack deletes its schedule", func(t *testing.T) {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "short-lived"})
		require.NoError(t, err)
		pkg := fmt.Sprintf("kind: File\nmetadata: {name: f}\nspec: {path: %s, content: \"x\\n\"}\n", filepath.Join(t.TempDir(), "f"))
		mustStatus(t, h.applyWait(st.ID, pkg, client.ApplyOptions{}), model.ExecCompleted)
		_, err = h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h"})
		require.NoError(t, err)
		require.False(t, h.scheduleGone(ctx, st.ID))
		ex, err := h.client.DeleteStack(ctx, st.ID, client.DeleteOptions{Wait: true})
		require.NoError(t, err)
		mustStatus(t, ex, model.ExecCompleted)
		_, err = h.client.GetStack(ctx, st.ID)
		require.True(t, client.IsStatus(err, http.StatusNotFound), "%v", err)
		assert.True(t, h.scheduleGone(ctx, st.ID), "the schedule outlived its stack")
	})

	t.Run("a schedule whose stack is gone deletes itself at its next check", func(t *testing.T) {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "orphan"})
		require.NoError(t, err)
		_, err = h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h"})
		require.NoError(t, err)
		// The record goes without the destroy path (as after an outage
		// between the two).
		require.NoError(t, h.store.DeleteStack(ctx, st.ID))
		sched := h.temporal.ScheduleClient().GetHandle(ctx, contract.DriftScheduleID(st.ID))
		require.NoError(t, sched.Trigger(ctx, tclient.ScheduleTriggerOptions{}))
		waitUntil(t, "the orphaned schedule is deleted", func() bool { return h.scheduleGone(ctx, st.ID) })
	})
}

func TestE2EDriftCheckRefusesForgedStarts(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "target"})
	require.NoError(t, err)
	other, err := h.client.CreateStack(ctx, model.StackInput{Name: "other"})
	require.NoError(t, err)
	_, err = h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h"})
	require.NoError(t, err)
	due := time.Now().UTC().Format(time.RFC3339)
	start := func(t *testing.T, id string, wf any, arg any) error {
		run, err := h.temporal.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: id, TaskQueue: h.queue}, wf, arg)
		require.NoError(t, err)
		return run.Get(ctx, nil)
	}
	tests := []struct {
		name string
		id   string
		wf   any
		arg  any
	}{
		{"drift check under a made-up id", "drift-" + st.ID + "-whenever", workflows.DriftCheckWorkflow, workflows.DriftInput{StackID: st.ID}},
		{"drift check under another stack's id", contract.DriftScheduleID(other.ID) + "-" + due, workflows.DriftCheckWorkflow, workflows.DriftInput{StackID: st.ID}},
		{"drift check under an apply's id", workflows.StackWorkflowID(st.ID), workflows.DriftCheckWorkflow, workflows.DriftInput{StackID: st.ID}},
		{"hook delivery with no parent execution", "hooks-forged", workflows.HookDeliveryWorkflow, workflows.HookDeliveryInput{Event: model.HookEvent{
			ID: "x", Type: model.EventDriftDetected, StackID: st.ID, ExecutionID: contract.DriftScheduleID(st.ID) + "-" + due + ".run",
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := start(t, tc.id, tc.wf, tc.arg)
			var app *temporal.ApplicationError
			require.True(t, errors.As(err, &app), "the forged start ran: %v", err)
			assert.Equal(t, workflows.UntrustedInputType, app.Type())
		})
	}
	d, err := h.client.GetDrift(ctx, st.ID)
	require.NoError(t, err)
	assert.Nil(t, d.LastCheck, "a forged check recorded a result")
}

// blockingReceiver holds every delivery until released.
type blockingReceiver struct {
	release  chan struct{}
	mu       sync.Mutex
	inFlight int
	done     int
}

func (b *blockingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.inFlight++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.inFlight--
		b.mu.Unlock()
	}()
	select {
	case <-b.release:
		b.mu.Lock()
		b.done++
		b.mu.Unlock()
	case <-r.Context().Done():
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}
}

func (b *blockingReceiver) state() (inFlight, done int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight, b.done
}

func TestE2EHookDeliveryDoesNotHoldTheExecution(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	recv := &blockingReceiver{release: make(chan struct{})}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-recv.release:
		default:
			close(recv.release)
		}
	})
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "hooked"})
	require.NoError(t, err)
	_, err = h.client.PutHooks(ctx, st.ID, []model.Hook{{URL: srv.URL, Events: []string{model.EventExecutionCompleted}}})
	require.NoError(t, err)
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: f}\nspec: {path: %s, content: \"x\\n\"}\n", filepath.Join(t.TempDir(), "f"))
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	// The apply ends while its delivery is still held by the receiver.
	waitUntil(t, "the apply finished with its delivery in flight", func() bool {
		got, err := h.client.GetExecution(ctx, ex.ID)
		inFlight, _ := recv.state()
		return err == nil && got.Finished() && inFlight > 0
	})
	got, err := h.client.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	mustStatus(t, got, model.ExecCompleted)
	close(recv.release)
	waitUntil(t, "the delivery still arrives", func() bool {
		_, done := recv.state()
		return done > 0
	})
}

func TestE2EDriftUsesTheLastApplyParameters(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "params"})
	require.NoError(t, err)
	dir := t.TempDir()
	pkg := fmt.Sprintf("kind: File\nmetadata: {name: site}\nspec:\n  path: %s/site.conf\n  content: \"site={{ env \\\"SITE\\\" }}\\n\"\n", dir)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg), Format: "yaml"},
		client.ApplyOptions{Wait: true, Params: model.ApplyParams{EnvRefs: map[string]string{"SITE": "prod"}}})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	_, err = h.client.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h"})
	require.NoError(t, err)

	first := h.triggerCheck(ctx, t, st.ID, "")
	assert.Empty(t, first.Error)
	assert.False(t, first.Drifted, "the check did not use the apply's parameters: %+v", first)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "site.conf"), []byte("site=staging\n"), 0o644))
	second := h.triggerCheck(ctx, t, st.ID, first.ExecutionID)
	require.True(t, second.Drifted, "%+v", second)

	// Retention removes the apply's step data, its parameters with it.
	require.NoError(t, h.store.DeleteStepData(ctx, ex.ID))
	third := h.triggerCheck(ctx, t, st.ID, second.ExecutionID)
	assert.False(t, third.Drifted)
	assert.Contains(t, third.Error, "the parameters of the last apply are gone")
	assert.Contains(t, third.Error, "env SITE")
}

func TestE2EHookIDsStayAcrossPut(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "ids"})
	require.NoError(t, err)
	events := []string{model.EventDriftDetected}
	first, err := h.client.PutHooks(ctx, st.ID, []model.Hook{{URL: "https://a.example/", Events: events}})
	require.NoError(t, err)
	second, err := h.client.PutHooks(ctx, st.ID, []model.Hook{
		{URL: "https://b.example/", Events: events},
		{URL: "https://a.example/", Events: []string{model.EventExecutionFailed}},
		{ID: "ops", URL: "https://c.example/", Events: events},
	})
	require.NoError(t, err)
	require.Len(t, second, 3)
	assert.Equal(t, first[0].ID, second[1].ID, "a hook kept its URL but not its id")
	assert.NotEqual(t, first[0].ID, second[0].ID)
	assert.Equal(t, "ops", second[2].ID, "the id given was not kept")
	listed, err := h.client.Hooks(ctx, st.ID)
	require.NoError(t, err)
	assert.Equal(t, second, listed)
}
