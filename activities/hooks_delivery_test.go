package activities_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// hookSink is a webhook receiver recording the events each path got.
type hookSink struct {
	mu  sync.Mutex
	got map[string][]model.HookEvent
	srv *httptest.Server
}

func newHookSink(t *testing.T) *hookSink {
	s := &hookSink{got: map[string][]model.HookEvent{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev model.HookEvent
		if json.Unmarshal(body, &ev) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.got[r.URL.Path] = append(s.got[r.URL.Path], ev)
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *hookSink) events(path string) []model.HookEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[path]
}

// hookActs returns activities over a fresh store with one stack whose
// hooks are hooks.
func hookActs(t *testing.T, allowPrivate bool, hooks []model.Hook) (*activities.Activities, string) {
	f := newFixture(t)
	ctx := context.Background()
	st := &model.Stack{Name: "hooked"}
	require.NoError(t, f.st.CreateStack(ctx, st))
	require.NoError(t, store.PutHooks(ctx, f.st, st.ID, hooks))
	return activities.New(activities.Deps{Store: f.st, HooksAllowPrivate: allowPrivate}), st.ID
}

func TestDeliverHooksRefusesLoopbackUnlessAllowed(t *testing.T) {
	sink := newHookSink(t)
	hooks := []model.Hook{{ID: "local", URL: sink.srv.URL + "/local", Events: []string{model.EventExecutionCompleted}}}

	t.Run("refused by default, for good", func(t *testing.T) {
		acts, stackID := hookActs(t, false, hooks)
		ev := model.HookEvent{ID: "e1", Type: model.EventExecutionCompleted, StackID: stackID}
		res, err := acts.DeliverHooks(context.Background(), contract.DeliverHooksInput{Event: ev})
		require.NoError(t, err)
		assert.Empty(t, res.Failed, "a refused address is not retried")
		err = acts.DeliverHook(context.Background(), contract.DeliverHookInput{HookID: "local", Event: ev})
		require.Error(t, err)
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app)
		assert.True(t, app.NonRetryable())
		assert.Contains(t, err.Error(), "loopback")
		assert.Contains(t, err.Error(), "CAIRN_HOOKS_ALLOW_PRIVATE")
		assert.Empty(t, sink.events("/local"), "the loopback receiver was reached")
	})
	t.Run("delivered when allowed", func(t *testing.T) {
		acts, stackID := hookActs(t, true, hooks)
		ev := model.HookEvent{ID: "e2", Type: model.EventExecutionCompleted, StackID: stackID}
		res, err := acts.DeliverHooks(context.Background(), contract.DeliverHooksInput{Event: ev})
		require.NoError(t, err)
		assert.Empty(t, res.Failed)
		require.Len(t, sink.events("/local"), 1)
		assert.Equal(t, "e2", sink.events("/local")[0].ID)
	})
}

func TestWantsHooks(t *testing.T) {
	ctx := context.Background()
	events := []string{model.EventExecutionFailed}
	acts, stackID := hookActs(t, true, []model.Hook{{ID: "h", URL: "https://example.invalid/h", Events: events}})
	failed := model.HookEvent{Type: model.EventExecutionFailed, StackID: stackID}
	completed := model.HookEvent{Type: model.EventExecutionCompleted, StackID: stackID}
	for _, tc := range []struct {
		name string
		in   contract.DeliverHooksInput
		want bool
	}{
		{"an event a hook asks for", contract.DeliverHooksInput{Event: failed}, true},
		{"an event no hook asks for", contract.DeliverHooksInput{Event: completed}, false},
		{"a dry-run's, no hook asking for dry-runs", contract.DeliverHooksInput{Event: failed, DryRun: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := acts.WantsHooks(ctx, tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	bare, bareID := hookActs(t, true, nil)
	got, err := bare.WantsHooks(ctx, contract.DeliverHooksInput{Event: model.HookEvent{Type: model.EventExecutionFailed, StackID: bareID}})
	require.NoError(t, err)
	assert.False(t, got, "a stack without hooks")
}

func TestDeliverHooksDryRunsOption(t *testing.T) {
	sink := newHookSink(t)
	events := []string{model.EventExecutionCompleted}
	acts, stackID := hookActs(t, true, []model.Hook{
		{ID: "all", URL: sink.srv.URL + "/all", Events: events, DryRuns: true},
		{ID: "applies", URL: sink.srv.URL + "/applies", Events: events},
	})
	ctx := context.Background()
	dry := model.HookEvent{ID: "dry", Type: model.EventExecutionCompleted, StackID: stackID, Kind: model.ExecDryRun}
	_, err := acts.DeliverHooks(ctx, contract.DeliverHooksInput{Event: dry, DryRun: true})
	require.NoError(t, err)
	apply := model.HookEvent{ID: "apply", Type: model.EventExecutionCompleted, StackID: stackID, Kind: model.ExecApply}
	_, err = acts.DeliverHooks(ctx, contract.DeliverHooksInput{Event: apply})
	require.NoError(t, err)

	ids := func(evs []model.HookEvent) []string {
		out := []string{}
		for _, e := range evs {
			out = append(out, e.ID)
		}
		return out
	}
	assert.ElementsMatch(t, []string{"dry", "apply"}, ids(sink.events("/all")), "dryRuns: true gets dry-runs and the rest")
	assert.Equal(t, []string{"apply"}, ids(sink.events("/applies")), "a hook without dryRuns got a dry-run's event")
}

func TestDeliverHooksNamesUnreachedHooks(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	sink := newHookSink(t)
	events := []string{model.EventDriftDetected}
	acts, stackID := hookActs(t, true, []model.Hook{
		{ID: "down", URL: down.URL, Events: events},
		{ID: "up", URL: sink.srv.URL + "/up", Events: events},
		{ID: "other", URL: sink.srv.URL + "/other", Events: []string{model.EventExecutionFailed}},
	})
	res, err := acts.DeliverHooks(context.Background(), contract.DeliverHooksInput{
		Event: model.HookEvent{ID: "d", Type: model.EventDriftDetected, StackID: stackID},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"down"}, res.Failed)
	assert.Len(t, sink.events("/up"), 1)
	assert.Empty(t, sink.events("/other"), "a hook got an event it did not ask for")
}
