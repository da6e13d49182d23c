package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
)

// fleetNodes is a fleet whose node workers' polls outnumbered a frontend's
// per-namespace limit (1,200) when each node worker held 8 workflow and 8
// activity polls: 7 of 200 nodes were never served.
const fleetNodes = 250

// fleetTasks is the chain of shell tasks each node runs.
const fleetTasks = 10

// fleetEventLimit bounds any one history event of a fleet's execution,
// half the SDK's payload warning (512 KB). The largest is the PrepareGraph
// result (the units): about 55 KB here.
const fleetEventLimit = 256 << 10

// TestE2EGraphOnAFleet executes a graph of fleetTasks chained shell tasks
// on fleetNodes local nodes through the HTTP API: every node is served
// (its worker's polls fit in the frontend's limit), every step succeeds in
// its order on its node, and the execution's histories stay small: no more
// than 10,000 events and no event above fleetEventLimit. About 5 s on 2
// CPUs.
func TestE2EGraphOnAFleet(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	c := h.client
	suffix := strings.ToLower(strings.ReplaceAll(h.token[len(h.token)-8:], "-", ""))
	rel, err := c.CreateRelease(ctx, model.ReleaseInput{ID: "rel-" + suffix, Name: "release"})
	require.NoError(t, err)
	nodes := make([]model.Node, fleetNodes)
	for i := range nodes {
		nodes[i] = model.Node{ID: fmt.Sprintf("n%d", i), Roles: []string{"compute"}, Mode: model.NodeLocal}
	}
	cl, err := c.CreateCluster(ctx, model.ClusterInput{ID: "cl-" + suffix, Name: "fleet", ReleaseID: rel.ID, Nodes: nodes})
	require.NoError(t, err)
	require.NoError(t, h.nodes.Sync(ctx))
	tasks, order := make([]string, fleetTasks), ""
	for i := range tasks {
		requires := ""
		if i > 0 {
			requires = fmt.Sprintf(`, "requires": ["t%d"]`, i)
		}
		tasks[i] = fmt.Sprintf(`{"id": "t%d", "type": "shell", "roles": ["*"]%s, "parameters": {"cmd": "echo t%d >> order"}}`, i+1, requires, i+1)
		order += fmt.Sprintf("t%d\n", i+1)
	}
	_, err = c.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Format: "json", Data: []byte("[" + strings.Join(tasks, ",") + "]")})
	require.NoError(t, err)

	start := time.Now()
	ex, err := c.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{})
	require.NoError(t, err)
	done, err := c.Wait(ctx, ex.ID, 250*time.Millisecond)
	require.NoError(t, err)
	t.Logf("%d nodes × %d steps in %s", fleetNodes, fleetTasks, time.Since(start).Round(time.Millisecond))
	mustStatus(t, done, model.ExecCompleted)
	require.NotNil(t, done.Report)
	assert.Equal(t, fleetTasks*fleetNodes, done.Report.Created+done.Report.Updated+done.Report.Unchanged, "report %+v", done.Report)
	assert.Zero(t, done.Report.Failed+done.Report.Skipped, "report %+v", done.Report)
	for _, n := range nodes {
		got, err := os.ReadFile(filepath.Join(h.nodes.NodeRoot(cl.ID, n.ID), "order"))
		require.NoError(t, err, "node %s ran nothing", n.ID)
		require.Equal(t, order, string(got), "node %s", n.ID)
	}

	// The execution's workflow and any child (shards) it started.
	wfID, runID := starter.ParseExecutionID(done.ID)
	type run struct{ id, run string }
	queue := []run{{wfID, runID}}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		it := h.temporal.GetWorkflowHistory(ctx, r.id, r.run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events, largest := 0, 0
		var largestType enumspb.EventType
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			events++
			if size := proto.Size(ev); size > largest {
				largest, largestType = size, ev.GetEventType()
			}
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				queue = append(queue, run{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
			}
		}
		t.Logf("history of %s: %d events, largest %d bytes (%s)", r.id, events, largest, largestType)
		assert.LessOrEqual(t, events, 10_000, "history of %s", r.id)
		assert.LessOrEqual(t, largest, fleetEventLimit, "history of %s: its largest event (%s)", r.id, largestType)
	}
}
