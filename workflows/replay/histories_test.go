package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	tclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/worker"
	"github.com/cairn-io/cairn/workflows"
)

// historiesDir holds one directory of histories per release they were
// recorded from.
const historiesDir = "testdata"

// history is one workflow execution's recorded history; name is its file
// name without the extension: <scenario>.<workflow type>[-<n>].
type history struct {
	name    string
	history *historypb.History
}

// workflowType is the type of the execution the history is of.
func workflowType(h *historypb.History) string {
	return h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
}

// collect waits for each root execution and every child it started
// (shards, dry-runs and repairs of a drift check, hook deliveries) to
// close, and returns their histories, named after scenario.
func collect(ctx context.Context, t *testing.T, c tclient.Client, scenario string, roots []string) []history {
	t.Helper()
	type run struct{ id, run string }
	var queue []run
	for _, r := range roots {
		id, runID := starter.ParseExecutionID(r)
		queue = append(queue, run{id, runID})
	}
	var out []history
	seen := map[string]int{}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		// A failed execution is recorded too; only its closing matters.
		_ = c.GetWorkflow(ctx, r.id, r.run).Get(ctx, nil)
		h := &historypb.History{}
		it := c.GetWorkflowHistory(ctx, r.id, r.run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err, "history of %s", r.id)
			h.Events = append(h.Events, ev)
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				queue = append(queue, run{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
			}
		}
		require.NotEmpty(t, h.Events, "history of %s", r.id)
		typ := workflowType(h)
		seen[typ]++
		name := scenario + "." + typ
		if seen[typ] > 1 {
			name += fmt.Sprintf("-%d", seen[typ])
		}
		out = append(out, history{name: name, history: h})
	}
	return out
}

// write stores histories in dir as JSON files of the format `temporal
// workflow show -o json` writes and client.HistoryFromJSON reads.
func write(t *testing.T, dir string, hs []history) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, h := range hs {
		b, err := protojson.MarshalOptions{Multiline: true, Indent: " "}.Marshal(h.history)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, h.name+".json"), append(b, '\n'), 0o644))
	}
}

// load reads the histories of every release under dir.
func load(t *testing.T, dir string) []history {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	require.NoError(t, err)
	var out []history
	for _, f := range files {
		r, err := os.Open(f)
		require.NoError(t, err)
		h, err := tclient.HistoryFromJSON(r, tclient.HistoryJSONOptions{})
		r.Close()
		require.NoError(t, err, "history %s", f)
		require.NotEmpty(t, h.GetEvents(), "history %s", f)
		rel, _ := filepath.Rel(dir, f)
		out = append(out, history{name: strings.TrimSuffix(rel, ".json"), history: h})
	}
	return out
}

// namedRegistry is a workflow replayer that notes the type names of the
// workflows registered with it, as the SDK names them.
type namedRegistry struct {
	sdkworker.WorkflowReplayer
	names []string
}

func (n *namedRegistry) RegisterWorkflow(w any) {
	n.RegisterWorkflowWithOptions(w, workflow.RegisterOptions{})
}

func (n *namedRegistry) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	name := o.Name
	if name == "" {
		// The SDK's default: the function's name without its package.
		full := runtime.FuncForPC(reflect.ValueOf(w).Pointer()).Name()
		name = strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
	}
	n.names = append(n.names, name)
	n.WorkflowReplayer.RegisterWorkflowWithOptions(w, o)
}

func (n *namedRegistry) RegisterDynamicWorkflow(w any, o workflow.DynamicRegisterOptions) {
	n.names = append(n.names, "<dynamic>")
	n.WorkflowReplayer.RegisterDynamicWorkflow(w, o)
}

// newReplayer is a replayer with every workflow `cairn server` runs,
// registered by the worker's own code, and their type names.
func newReplayer() *namedRegistry {
	r := &namedRegistry{WorkflowReplayer: sdkworker.NewWorkflowReplayer()}
	worker.RegisterAllWorkflows(r)
	return r
}

// features lists what a history shows of its execution's branches: the
// activities it scheduled ("activity:<name>"), the updates it accepted
// ("update:<name>") and the children it started ("child:<type>").
func features(h *historypb.History) []string {
	var out []string
	for _, ev := range h.GetEvents() {
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			out = append(out, "activity:"+ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName())
		case ev.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			out = append(out, "update:"+ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName())
		case ev.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
			out = append(out, "child:"+ev.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetWorkflowType().GetName())
		}
	}
	return out
}

// branches are what the histories of a release must show, by workflow
// type: the states an upgrade may find an execution in.
var branches = map[string][]string{
	"ApplyWorkflow": {
		"activity:" + contract.CompensateName, // a failure rolled back
		"update:" + workflows.DecisionUpdate,  // a paused step decided
		"child:" + "HookDeliveryWorkflow",     // its end told to hooks
		"activity:" + contract.WriteStackRecordName,
	},
	"DryRunWorkflow":         {"update:" + workflows.ApprovalUpdate, "child:ApplyWorkflow"}, // a plan approved
	"GraphExecutionWorkflow": {"child:ShardWorkflow", "update:" + workflows.DecisionUpdate},
	"DriftCheckWorkflow":     {"child:DryRunWorkflow", "child:ApplyWorkflow", "child:HookDeliveryWorkflow"},
	"HookDeliveryWorkflow":   {"activity:" + contract.DeliverHookName}, // a hook retried
}

// checkHistories replays every history with the worker's registration
// and checks that they cover every registered workflow type and the
// branches each must show, and that every node step went to the queue
// this build's node workers poll.
func checkHistories(t *testing.T, hs []history) {
	t.Helper()
	rep := newReplayer()
	require.NotContains(t, rep.names, "<dynamic>", "a dynamic workflow cannot be covered by recorded histories")
	types := map[string][]string{}
	nodeSteps := 0
	for _, h := range hs {
		t.Run(h.name, func(t *testing.T) {
			started := h.history.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
			require.NotEmpty(t, started.GetWorkflowId(), "history %s does not name its workflow id", h.name)
			// The workflows check the id they run under (a forged start
			// is refused), so the replay runs under the recorded one.
			exec := workflow.Execution{ID: started.GetWorkflowId(), RunID: started.GetOriginalExecutionRunId()}
			require.NoError(t, rep.ReplayWorkflowHistoryWithOptions(nil, h.history, sdkworker.ReplayWorkflowHistoryOptions{OriginalExecution: exec}),
				"history %s no longer replays: the change needs workflow.GetVersion (docs/operating.md, Upgrades)", h.name)
			nodeSteps += checkNodeQueues(t, h.history)
		})
		typ := workflowType(h.history)
		types[typ] = append(types[typ], features(h.history)...)
	}
	for _, name := range rep.names {
		require.Contains(t, types, name, "workflow type %s is registered but no history of it is recorded: record one (docs/operating.md, Upgrades)", name)
	}
	require.Positive(t, nodeSteps, "no recorded step ran on a node's queue")
	for typ, want := range branches {
		for _, f := range want {
			require.True(t, slices.Contains(types[typ], f), "no recorded history of %s shows %s", typ, f)
		}
	}
}

// checkNodeQueues checks that every step scheduled for a node went to
// the task queue workflows.NodeTaskQueue names for it today: a new name
// for a node's queue would strand the steps of executions in flight (their
// retries keep the queue they were scheduled on), so it needs the old
// name served until they are done, or a version guard.
func checkNodeQueues(t *testing.T, h *historypb.History) (checked int) {
	t.Helper()
	for _, ev := range h.GetEvents() {
		a := ev.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		var in struct {
			Cluster string `json:"cluster"`
			Unit    struct {
				Node string `json:"node"`
			} `json:"unit"`
		}
		payloads := a.GetInput().GetPayloads()
		if len(payloads) != 1 || json.Unmarshal(payloads[0].GetData(), &in) != nil {
			continue
		}
		if in.Cluster == "" || workflows.IsControlPlane(in.Unit.Node) {
			continue
		}
		require.Equal(t, workflows.NodeTaskQueue(in.Cluster, in.Unit.Node), a.GetTaskQueue().GetName(),
			"event %d: a step of node %q of cluster %q went to another queue than this build's node workers poll", ev.GetEventId(), in.Unit.Node, in.Cluster)
		checked++
	}
	return checked
}
