package prepare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// nodeHistory reads node history for one preparation, each entry once.
// With force the history functions of conditions answer as if no node had
// any.
type nodeHistory struct {
	st      GraphStore
	cluster string
	force   bool
	runs    map[string]*model.TaskRun // node + "\x00" + task; nil = never ran
}

func newNodeHistory(st GraphStore, cluster string, force bool) *nodeHistory {
	return &nodeHistory{st: st, cluster: cluster, force: force, runs: map[string]*model.TaskRun{}}
}

func (h *nodeHistory) last(ctx context.Context, node, task string) (*model.TaskRun, error) {
	key := node + "\x00" + task
	if run, ok := h.runs[key]; ok {
		return run, nil
	}
	run, err := h.st.LastTaskRun(ctx, h.cluster, node, task)
	if errors.Is(err, store.ErrNotFound) {
		run, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	h.runs[key] = run
	return run, nil
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
