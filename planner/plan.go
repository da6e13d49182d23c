package planner

import (
	"fmt"

	"github.com/cairn-io/cairn/dag"

	"github.com/cairn-io/cairn/contract"
)

// Plan shape defaults.
const (
	// DefaultUnitSize is the most steps one unit holds.
	DefaultUnitSize = 100
	// DefaultShardUnits is the most units one workflow runs before the
	// plan is split into child workflows.
	DefaultShardUnits = 2000
	// RoundsPerSlot and MaxAutoUnitSize shape UnitSize's units.
	RoundsPerSlot   = 25
	MaxAutoUnitSize = 1000
)

// UnitSize is the unit size of a plan of steps in mode, run parallelism
// units at a time, when none is asked for (asked 0): DefaultUnitSize,
// except that a dry-run that would take each of its parallel slots
// through more than RoundsPerSlot units gets units large enough to take
// about that many, up to MaxAutoUnitSize. Each unit costs a round trip
// through Temporal (its activity's completion, the workflow's decision,
// the next dispatch: tens of milliseconds on a busy control plane,
// whatever the unit holds), and a dry-run's steps only read, so that
// round trip is most of a unit's time: a dry-run of 100,000 files at 10
// at a time runs 250 units of 400 rather than 1,000 of 100. An apply
// keeps units of 100: its steps' writes share the machine, and larger
// units made the same create no faster, its time less even (measured in
// docs/performance.md). Progress is reported per unit, so a larger one
// reports less often. An asked size is kept.
func UnitSize(asked int, mode contract.Mode, steps, parallelism int) int {
	if asked > 0 {
		return asked
	}
	if mode != contract.ModeDryRun {
		return DefaultUnitSize
	}
	if parallelism <= 0 {
		parallelism = contract.DefaultParallelism
	}
	slots := parallelism * RoundsPerSlot
	return min(max(DefaultUnitSize, (steps+slots-1)/slots), MaxAutoUnitSize)
}

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
// package order among independent steps: the dag scheduler's run where
// every started step succeeds at once, the least Ord first.
func (b *Builder) order() ([]*StoredStep, error) {
	index := make(map[string]int, len(b.steps))
	for i, s := range b.steps {
		index[s.ID] = i
	}
	db := dag.NewBuilder(len(b.steps))
	for i, s := range b.steps {
		for _, d := range Deps(&s.Step) {
			j, ok := index[d]
			if !ok {
				return nil, fmt.Errorf("step %s depends on unknown step %s", s.ID, d)
			}
			db.DependsOn(i, j)
		}
	}
	sched := db.Build(dag.Options{Less: func(x, y int) bool { return b.steps[x].Ord < b.steps[y].Ord }})
	out := make([]*StoredStep, 0, len(b.steps))
	for v, ok := sched.Next(); ok; v, ok = sched.Next() {
		out = append(out, b.steps[v])
		sched.Succeed(v)
	}
	if len(out) != len(b.steps) {
		return nil, fmt.Errorf("the steps' dependencies form a cycle")
	}
	return out, nil
}
