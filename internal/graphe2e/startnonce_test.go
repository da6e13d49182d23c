package graphe2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A graph execution's input, copied from its history and started again
// under its own id (the cluster's lock, free once the execution ended) by
// someone who reaches Temporal, finds its start nonce consumed and ends
// failed before its first step: the task does not run again.
func TestACopiedGraphStartRunsNothing(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: mark
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo ran >> mark.txt"}
`)
	e := h.run(contract.GraphRequest{Nodes: []string{"n2"}})
	mustStatus(t, e, model.ExecCompleted)
	mark := filepath.Join(h.root("n2"), "mark.txt")
	got, err := os.ReadFile(mark)
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(got))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := h.dev.Client.GetWorkflowHistory(ctx, e.WorkflowID, e.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	require.True(t, it.HasNext())
	ev, err := it.Next()
	require.NoError(t, err)
	input := ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	require.Len(t, input, 1)
	run, err := h.dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: e.WorkflowID, TaskQueue: h.queue, WorkflowExecutionTimeout: time.Minute,
	}, "GraphExecutionWorkflow", converter.NewRawValue(input[0]))
	require.NoError(t, err)
	err = run.Get(ctx, nil)
	require.Error(t, err, "the copy completed")
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app, "failure: %v", err)
	assert.Equal(t, contract.StartNotIssuedType, app.Type(), "failure: %v", err)
	got, err = os.ReadFile(mark)
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(got), "the copy ran the task again")
}
