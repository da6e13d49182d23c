package prepare

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// PlanReader reads an execution's step records (store.Store has it).
type PlanReader interface {
	GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error)
	ListStepData(ctx context.Context, execID, kind string) (map[string][]byte, error)
	EachStepData(ctx context.Context, execID, kind string, fn func(stepID string, data []byte) error) error
}

// IndexEntry is one step of an execution's index (kind
// contract.DataIndex, written by Persist): what the stack record and the
// plan need of it, without its spec, in package order.
type IndexEntry struct {
	ID           string      `json:"id"`
	Kind         string      `json:"k"`
	RecordKind   string      `json:"rk,omitempty"`
	Name         string      `json:"n"`
	Node         string      `json:"node,omitempty"`
	Associations []model.Ref `json:"a,omitempty"`
	Delete       bool        `json:"d,omitempty"`
	// Deps are the steps this one waits for (planner.Deps: dependsOn,
	// references and any-of members), for the execution's graph.
	Deps []string `json:"dep,omitempty"`
}

// StepIndex loads an execution's step index, in package order. Cost: one
// store read.
func StepIndex(ctx context.Context, st PlanReader, execID string) ([]IndexEntry, error) {
	return readIndex[IndexEntry](ctx, st, execID)
}

// stepOrder reads the ids of an execution's step index, in package
// order, leaving the rest of each entry undecoded: on 1,000 nodes the
// entries' dependencies alone decode to some 70 MB. Cost: one store read.
func stepOrder(ctx context.Context, st PlanReader, execID string) ([]string, error) {
	entries, err := readIndex[struct {
		ID string `json:"id"`
	}](ctx, st, execID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	return ids, nil
}

// readIndex decodes an execution's step index into entries of type T:
// the fields T names, the rest skipped.
func readIndex[T any](ctx context.Context, st PlanReader, execID string) ([]T, error) {
	raw, err := st.GetStepData(ctx, execID, contract.IndexKey, contract.DataIndex)
	if err != nil {
		return nil, fmt.Errorf("step index of %s: %w", execID, err)
	}
	var entries []T
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("step index of %s: %w", execID, err)
	}
	return entries, nil
}

// AllSteps loads every step Persist kept for an execution, in package
// order. Cost: two store reads, every step's spec decoded.
func AllSteps(ctx context.Context, st PlanReader, execID string) ([]*planner.StoredStep, error) {
	singles, err := st.ListStepData(ctx, execID, contract.DataStep)
	if err != nil {
		return nil, err
	}
	batches, err := st.ListStepData(ctx, execID, contract.DataUnit)
	if err != nil {
		return nil, err
	}
	out := make([]*planner.StoredStep, 0, len(singles)+len(batches)*planner.DefaultUnitSize)
	for id, b := range singles {
		var s planner.StoredStep
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("step %s: %w", id, err)
		}
		out = append(out, &s)
	}
	for key, b := range batches {
		var steps []*planner.StoredStep
		if err := json.Unmarshal(b, &steps); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, steps...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ord < out[j].Ord })
	return out, nil
}

// ReadPlan assembles a dry-run's plan from the store: the summary and
// every step in package order. Cost: three store reads, the plan's steps
// decoded row by row.
func ReadPlan(ctx context.Context, st PlanReader, execID string) (*model.Plan, error) {
	raw, err := st.GetStepData(ctx, execID, contract.PlanSummaryKey, contract.DataPlanSummary)
	if err != nil {
		return nil, err
	}
	var plan model.Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return nil, fmt.Errorf("plan summary of %s: %w", execID, err)
	}
	order, err := stepOrder(ctx, st, execID)
	if err != nil {
		return nil, err
	}
	// The plan's steps are decoded as they are read, so the encoded form
	// of 100,000 steps is never held whole.
	entries := map[string]model.PlanStep{}
	err = st.EachStepData(ctx, execID, contract.DataPlan, func(id string, b []byte) error {
		var ps model.PlanStep
		if err := json.Unmarshal(b, &ps); err != nil {
			return fmt.Errorf("plan step %s: %w", id, err)
		}
		entries[id] = ps
		return nil
	})
	if err != nil {
		return nil, err
	}
	plan.Steps = make([]model.PlanStep, 0, len(entries))
	for _, id := range order {
		if ps, ok := entries[id]; ok {
			plan.Steps = append(plan.Steps, ps)
		}
	}
	if plan.MissingEnvRefs == nil {
		plan.MissingEnvRefs = []string{}
	}
	if plan.MissingSecrets == nil {
		plan.MissingSecrets = []string{}
	}
	return &plan, nil
}
