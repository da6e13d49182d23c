package starter_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/worker"
	"github.com/cairn-io/cairn/workflows"
)

// trustRig is a Cairn worker that reads stack URLs over HTTP from a
// server whose package runs a command leaving a marker file, so a test
// can tell whether anything was fetched or run. With a codec key its
// client seals payloads and refuses unsealed ones.
type trustRig struct {
	*harness
	// c is the client of Cairn's worker and starter (with the codec when
	// sealed); the harness's dev.Client is an outsider's, with none.
	c       client.Client
	starter *starter.Starter
	url     string // the package that runs the marker command
	marker  string
	fetched atomic.Int32
	// failures is the sealed client's failure converter (nil unsealed).
	failures converter.FailureConverter
}

func newTrustRig(t *testing.T, sealed bool) *trustRig {
	t.Helper()
	r := &trustRig{harness: newHarness(t, harnessOptions{noWorker: true})}
	r.marker = filepath.Join(t.TempDir(), "ran")
	pkg := fmt.Sprintf("kind: Exec\nmetadata: {name: mark}\nspec: {command: \"touch %s\"}\n", r.marker)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.fetched.Add(1)
		_, _ = w.Write([]byte(pkg))
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/package.yaml"

	r.c = r.dev.Client
	var dc converter.DataConverter
	if sealed {
		key := make([]byte, codec.KeySize)
		_, _ = rand.Read(key)
		var err error
		dc, err = codec.DataConverter(key)
		require.NoError(t, err)
		r.failures = codec.FailureConverter(dc)
		r.c, err = client.NewClientFromExisting(r.dev.Client, client.Options{DataConverter: dc, FailureConverter: r.failures})
		require.NoError(t, err)
	}
	r.starter = starter.New(r.c, starter.Config{TaskQueue: r.queue, Store: r.store, DataConverter: dc})
	fetcher := fetch.New(fetch.Options{Schemes: []string{"http"}, MaxBytes: 1 << 20, Timeout: 10 * time.Second})
	deps, opts := worker.Deps{Store: r.store, Fetch: fetcher, Logger: testLogger()}, worker.Options{TaskQueue: r.queue}
	w, err := worker.New(r.c, deps, opts)
	require.NoError(t, err)
	worker.RegisterGraph(w, deps, opts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return r
}

// stackWithURL creates a stack whose record holds the marker package's URL.
func (r *trustRig) stackWithURL() *model.Stack {
	r.t.Helper()
	s := &model.Stack{Name: "trust", URLs: []string{r.url}}
	require.NoError(r.t, r.store.CreateStack(context.Background(), s))
	return s
}

// forge starts workflowType with a plaintext input on Cairn's task queue,
// as anyone who reaches Temporal can, and waits for it to close.
func (r *trustRig) forge(t *testing.T, id, workflowType string, input map[string]any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := r.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: r.queue, WorkflowExecutionTimeout: time.Minute,
	}, workflowType, input)
	require.NoError(t, err)
	// Cairn's own client reads the failure (sealed with the codec key).
	err = r.c.GetWorkflow(ctx, id, run.GetRunID()).Get(ctx, nil)
	require.Error(t, err, "a forged %s under id %s completed", workflowType, id)
	require.NoError(t, ctx.Err(), "a forged %s under id %s did not close", workflowType, id)
	return err
}

// ranNothing asserts the marker command never ran and, when nothing may
// have been fetched, that the package URL was never read.
func (r *trustRig) ranNothing(t *testing.T, fetchedBefore ...int32) {
	t.Helper()
	_, err := os.Stat(r.marker)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the package's command ran (marker: %v)", err)
	var before int32
	if len(fetchedBefore) > 0 {
		before = fetchedBefore[0]
	}
	assert.Equal(t, before, r.fetched.Load(), "the package URL was fetched")
}

func untrustedInput(t *testing.T, err error) {
	t.Helper()
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Equal(t, workflows.UntrustedInputType, app.Type(), "failure: %v", err)
}

// With a codec key, a plaintext ApplyWorkflow started on Temporal directly
// (the issue's `temporal workflow start --input '{"stackId":…,"urls":[…]}'`)
// fails before anything runs, even naming the stack's own URLs under the
// stack's own lock id; a sealed apply from Cairn's starter still runs.
func TestForgedPlaintextApplyRunsNothingWithACodecKey(t *testing.T) {
	r := newTrustRig(t, true)
	s := r.stackWithURL()

	err := r.forge(t, workflows.StackWorkflowID(s.ID), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": []string{r.url}})
	assert.ErrorContains(t, err, "not sealed")
	r.ranNothing(t)

	// Cairn's own sealed apply of the same stack runs.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := r.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, URLs: s.URLs})
	require.NoError(t, err)
	done, err := r.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, done.Status, done.Error)
	assert.FileExists(t, r.marker)
}

// A workflow whose id is not the one its input calls for fails at once and
// runs nothing: an apply or destroy under another stack's lock id or a
// random id (which would let two applies of a stack run at once), a
// dry-run under a lock id, a graph execution under a dry-run's id.
func TestForgedWorkflowIDsRunNothing(t *testing.T) {
	r := newTrustRig(t, false)
	s := r.stackWithURL()
	other := r.stackWithURL()
	nonce := "00000000-0000-4000-8000-" + randomHex(6)
	tests := []struct {
		name, id, typ string
		input         map[string]any
	}{
		{"apply under another stack's lock", workflows.StackWorkflowID(other.ID), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": s.URLs}},
		{"apply under a random id", "stack-" + randomHex(8), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": s.URLs}},
		{"apply under a dry-run id", workflows.DryRunWorkflowID(s.ID, nonce), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": s.URLs}},
		{"destroy under a random id", randomHex(8), "DestroyWorkflow", map[string]any{"stackId": s.ID}},
		{"dry-run under the stack's lock", workflows.StackWorkflowID(s.ID), "DryRunWorkflow", map[string]any{"stackId": s.ID, "urls": s.URLs}},
		{"apply naming another execution's id", workflows.StackWorkflowID(s.ID), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": s.URLs, "executionId": "stack-" + other.ID + ".x"}},
		{"apply sending control steps elsewhere", workflows.StackWorkflowID(s.ID), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": s.URLs, "controlQueue": "cairn-node-c1-n1"}},
		{"graph run under a dry-run id", workflows.GraphDryRunWorkflowID("c1", nonce), "GraphExecutionWorkflow", map[string]any{"clusterId": "c1"}},
		{"graph run under another cluster's lock", workflows.GraphWorkflowID("c2"), "GraphExecutionWorkflow", map[string]any{"clusterId": "c1"}},
		{"shard without a parent", "x-shard-0", "ShardWorkflow", map[string]any{"options": map[string]any{"executionId": "x"}, "shard": map[string]any{"index": 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			untrustedInput(t, r.forge(t, tt.id, tt.typ, tt.input))
		})
	}
	r.ranNothing(t)

	// While a forged apply holds nothing, the stack's lock is free for
	// Cairn's own apply, which holds it against a second one.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := r.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, URLs: s.URLs})
	require.NoError(t, err)
	done, err := r.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, done.Status, done.Error)
}

// An apply under the stack's own id whose input names URLs that are not
// the stack's is refused: nothing is fetched, nothing runs.
func TestApplyOfURLsThatAreNotTheStacksIsRefused(t *testing.T) {
	r := newTrustRig(t, false)
	s := &model.Stack{Name: "mine", URLs: []string{r.url + "?mine"}}
	require.NoError(t, r.store.CreateStack(context.Background(), s))

	// A start nonce issued, so the check of the URLs is what refuses it.
	require.NoError(t, r.store.PutStartNonce(context.Background(), "issued-nonce", workflows.StackWorkflowID(s.ID)))
	err := r.forge(t, workflows.StackWorkflowID(s.ID), "ApplyWorkflow", map[string]any{"stackId": s.ID, "urls": []string{r.url}, "nonce": "issued-nonce"})
	assert.ErrorContains(t, err, "not stack")
	r.ranNothing(t)
}

// Cancel refuses workflows Cairn did not start: another type, one of
// Cairn's types under an id of another shape, or on another task queue.
// None of them is asked to cancel.
func TestCancelRefusesWorkflowsThatAreNotCairns(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct{ name, id, typ, queue string }{
		{"another type", "stack-" + randomHex(6), "PayrollWorkflow", h.queue},
		{"a Cairn type under another id", "payroll-" + randomHex(6), "ApplyWorkflow", h.queue},
		{"a Cairn id on another queue", "stack-" + randomHex(6), "ApplyWorkflow", "payroll"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No worker polls: the workflow stays running.
			run, err := h.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: tt.id, TaskQueue: tt.queue}, tt.typ)
			require.NoError(t, err)
			t.Cleanup(func() { _ = h.dev.Client.TerminateWorkflow(context.Background(), tt.id, "", "test over") })

			err = h.starter.Cancel(ctx, tt.id)
			require.ErrorIs(t, err, starter.ErrNotFound)
			_, err = h.starter.Decide(ctx, tt.id, model.DecisionRequest{Action: "abort"})
			require.ErrorIs(t, err, starter.ErrNotFound)

			it := h.dev.Client.GetWorkflowHistory(ctx, tt.id, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				require.NoError(t, err)
				assert.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED, ev.GetEventType(), "cancel reached %s", tt.id)
				assert.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, ev.GetEventType(), "a decision reached %s", tt.id)
			}
		})
	}
}

// A filter value holding quotes and backslashes is one string literal of
// the visibility query: it matches no stack, where a value that closed the
// literal would add a clause matching every stack.
func TestListFilterValuesCannotChangeTheQuery(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stack := "s-" + randomHex(6)
	id := workflows.StackWorkflowID(stack)
	_, err := h.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: h.queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.Stack.ValueSet(stack), searchattr.Kind.ValueSet(string(model.ExecApply))),
	}, "ApplyWorkflow")
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.dev.Client.TerminateWorkflow(context.Background(), id, "", "test over") })

	// Visibility is eventually consistent: wait until the stack's own
	// filter finds it.
	require.Eventually(t, func() bool {
		got, _, err := h.starter.List(ctx, starter.Filter{Stack: stack})
		return err == nil && len(got) == 1
	}, 30*time.Second, 100*time.Millisecond)

	for _, value := range []string{
		`x' OR CairnStack IS NOT NULL -- `,
		`x\' OR CairnStack IS NOT NULL -- `,
		`x\' OR CairnStack IS NOT NULL #`,
		`x\\' OR CairnStack IS NOT NULL -- `,
		`x" OR CairnStack IS NOT NULL -- `,
		stack + `' OR CairnStack = '` + stack,
	} {
		got, _, err := h.starter.List(ctx, starter.Filter{Stack: value})
		require.NoError(t, err, "filter %q", value)
		assert.Empty(t, got, "filter %q widened the query", value)
	}
}
