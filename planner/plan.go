package planner

import (
	"fmt"

	"github.com/cairn-io/cairn/contract"
)

// Plan shape defaults.
const (
	// DefaultUnitSize is the most steps one unit holds.
	DefaultUnitSize = 100
	// DefaultShardUnits is the most units one workflow runs before the
	// plan is split into child workflows.
	DefaultShardUnits = 2000
)

// Plan is an execution's steps ordered and grouped: Units[i] runs the
// steps Members[i], listed so each comes after its dependencies in the
// unit. Order is every step, each after its dependencies, package order
// among independent ones.
type Plan struct {
	Order   []*StoredStep
	Units   []contract.Unit
	Members [][]*StoredStep
}

// Plan orders the steps and groups them into units of at most size steps
// (size 0: DefaultUnitSize; 1: one step per unit). It fails when a step
// waits for an unknown step or the steps form a cycle.
func (b *Builder) Plan(size int) (*Plan, error) {
	if size <= 0 {
		size = DefaultUnitSize
	}
	order, err := b.order()
	if err != nil {
		return nil, err
	}
	b.markExported()
	units, members := group(b.mode, order, size)
	return &Plan{Order: order, Units: units, Members: members}, nil
}

// markExported flags the steps whose outputs a dependent reads.
func (b *Builder) markExported() {
	for _, s := range b.steps {
		if !s.NeedsResolve() {
			continue
		}
		for _, d := range Deps(&s.Step) {
			if dep, ok := b.byID[d]; ok {
				dep.Exported = true
			}
		}
	}
}

// order sorts the steps so each comes after its dependencies, keeping
// package order among independent steps.
func (b *Builder) order() ([]*StoredStep, error) {
	indeg := make(map[string]int, len(b.steps))
	dependents := map[string][]*StoredStep{}
	for _, s := range b.steps {
		for _, d := range Deps(&s.Step) {
			if _, ok := b.byID[d]; !ok {
				return nil, fmt.Errorf("step %s depends on unknown step %s", s.ID, d)
			}
			indeg[s.ID]++
			dependents[d] = append(dependents[d], s)
		}
	}
	ready := &ordHeap{}
	for _, s := range b.steps {
		if indeg[s.ID] == 0 {
			ready.push(s)
		}
	}
	out := make([]*StoredStep, 0, len(b.steps))
	for ready.len() > 0 {
		s := ready.pop()
		out = append(out, s)
		for _, d := range dependents[s.ID] {
			if indeg[d.ID]--; indeg[d.ID] == 0 {
				ready.push(d)
			}
		}
	}
	if len(out) != len(b.steps) {
		return nil, fmt.Errorf("the steps' dependencies form a cycle")
	}
	return out, nil
}

// ordHeap pops the ready step that comes first in the package.
type ordHeap struct{ items []*StoredStep }

func (h *ordHeap) len() int { return len(h.items) }

func (h *ordHeap) push(s *StoredStep) {
	h.items = append(h.items, s)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.items[p].Ord <= h.items[i].Ord {
			break
		}
		h.items[p], h.items[i] = h.items[i], h.items[p]
		i = p
	}
}

func (h *ordHeap) pop() *StoredStep {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.items[l].Ord < h.items[m].Ord {
			m = l
		}
		if r < len(h.items) && h.items[r].Ord < h.items[m].Ord {
			m = r
		}
		if m == i {
			return top
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
