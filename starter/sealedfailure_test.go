package starter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// With a codec key, a failed step's message is sealed in history (the
// failure converter encodes failures' messages): a client without the
// key reads no trace of it in any event, while Cairn's own client, which
// the API describes executions with, shows it.
func TestFailureMessagesAreSealedInHistory(t *testing.T) {
	r := newTrustRig(t, true)
	const secret = "sealed-failure-7f3a91"
	pkg := "kind: Exec\nmetadata: {name: fail}\nspec: {command: \"echo " + secret + " >&2; exit 3\"}\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(pkg)) }))
	t.Cleanup(srv.Close)
	s := &model.Stack{Name: "failing", URLs: []string{srv.URL + "/failing.yaml"}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, r.store.CreateStack(ctx, s))

	ex, err := r.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, URLs: s.URLs, OnFailure: model.OnFailureStop})
	require.NoError(t, err)
	require.Error(t, r.c.GetWorkflow(ctx, ex.WorkflowID, ex.RunID).Get(ctx, nil), "the apply failed")

	got, err := r.starter.Describe(ctx, ex.ID)
	require.NoError(t, err)
	shown, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Contains(t, string(shown), secret, "the execution does not show its failure")

	sealedFailures := 0
	it := r.dev.Client.GetWorkflowHistory(ctx, ex.WorkflowID, ex.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		raw, err := protojson.Marshal(ev)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), secret, "event %d (%s) shows the failure in clear", ev.GetEventId(), ev.GetEventType())
		if f := ev.GetActivityTaskFailedEventAttributes().GetFailure(); f != nil {
			sealedFailures++
			assert.Equal(t, "Encoded failure", f.GetMessage())
			assert.Contains(t, r.failures.FailureToError(f).Error(), secret, "the sealed failure does not open with the key")
		}
	}
	assert.NotZero(t, sealedFailures, "no activity failed")
}
