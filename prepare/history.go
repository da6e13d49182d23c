package prepare

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/model"
)

// nodeHistory reads node history for one preparation, each entry once.
// With force the history functions of conditions answer as if no node had
// any.
type nodeHistory struct {
	st      GraphStore
	cluster string
	force   bool
	nodes   map[string]map[string]*model.TaskRun // node → task → its last run
}

func newNodeHistory(st GraphStore, cluster string, force bool) *nodeHistory {
	return &nodeHistory{st: st, cluster: cluster, force: force, nodes: map[string]map[string]*model.TaskRun{}}
}

// last is the last successful run of task on node (nil: it never ran
// there). A node's history is read whole, once: one query a node, not one
// per task and node.
func (h *nodeHistory) last(ctx context.Context, node, task string) (*model.TaskRun, error) {
	runs, ok := h.nodes[node]
	if !ok {
		var err error
		if runs, err = h.st.NodeTaskRuns(ctx, h.cluster, node); err != nil {
			return nil, err
		}
		h.nodes[node] = runs
	}
	return runs[task], nil
}

// values answers the history functions of a condition on one node; own is
// the step's task, digests the parameters of every task of its graph.
func (h *nodeHistory) values(ctx context.Context, node, own string, digests map[string]string) historyValue {
	return func(fn, task string) (any, error) {
		if task == "" {
			task = own
		}
		digest, known := digests[task]
		if !known {
			return nil, fmt.Errorf("no task %q in the graph", task)
		}
		if h.force {
			// Forced: as if the node had no history.
			if fn == "changed" {
				return true, nil
			}
			return "", nil
		}
		run, err := h.last(ctx, node, task)
		if err != nil {
			return nil, err
		}
		if fn == "changed" {
			return run == nil || run.Digest != digest, nil
		}
		if run == nil {
			return "", nil
		}
		return run.At.UTC().Format(time.RFC3339Nano), nil
	}
}
