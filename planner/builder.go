package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// Builder collects an execution's steps: the package's own (with the
// object ids the stack recorded), the deletes of what left the package,
// and, for graphs, steps added one by one. Plan then orders and groups
// them. A Builder is used once, by one goroutine.
type Builder struct {
	mode    contract.Mode
	steps   []*StoredStep
	byID    map[string]*StoredStep
	deletes int
}

// NewBuilder returns an empty builder for an execution of mode.
func NewBuilder(mode contract.Mode) *Builder {
	return &Builder{mode: mode, byID: map[string]*StoredStep{}}
}

// Add adds a step; its Ord is its position among the steps added.
func (b *Builder) Add(s *StoredStep) {
	s.Ord = len(b.steps)
	b.steps = append(b.steps, s)
	b.byID[s.ID] = s
}

// Len is the number of steps added.
func (b *Builder) Len() int { return len(b.steps) }

// Deletes counts the delete steps added.
func (b *Builder) Deletes() int { return b.deletes }

// AddCurrent adds the package's steps, mapped onto their base kinds in cat
// and given the object ids the stack recorded. Every step that does not
// map is reported, in one error.
func (b *Builder) AddCurrent(steps []*model.Step, cat *kinds.Catalogue, stack *model.Stack) error {
	recorded := map[string]string{}
	if stack != nil {
		for _, r := range stack.Resources {
			recorded[RecordKey(r.Kind, r.PkgName, r.Node)] = r.ID
		}
	}
	var errs []string
	for _, s := range steps {
		ss, err := FromStep(cat, s)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if id, ok := recorded[RecordKey(s.Kind, s.Name, s.Node)]; ok && ss.ObjectID == "" {
			ss.ObjectID = id
		}
		b.Add(ss)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Removed lists the recorded resources the steps added so far do not
// hold (all of them for a destroy), in record order.
func (b *Builder) Removed(stack *model.Stack) []model.StackResource {
	present := map[string]bool{}
	for _, s := range b.steps {
		present[RecordKey(s.Kind, s.Name, s.Node)] = true
	}
	var out []model.StackResource
	for _, r := range stack.Resources {
		if !present[RecordKey(r.Kind, r.PkgName, r.Node)] {
			out = append(out, r)
		}
	}
	return out
}

// Previous is the package a stack was last applied with, when it is still
// readable: its steps and catalogue say how to delete what left it.
type Previous struct {
	Steps     []*model.Step
	Catalogue *kinds.Catalogue
}

// AddDeletes adds a delete step per removed resource. A delete of X waits
// for every resource that depended on X in the previous package: for its
// new step when it stays (it drops its link to X first), for its delete
// when it goes too. Without the previous package (old nil) deletes go by
// the recorded ids alone, with what the kinds' defaults say of where
// their objects live; cur is the current package's catalogue (or nil).
func (b *Builder) AddDeletes(removed []model.StackResource, old *Previous, cur *kinds.Catalogue) error {
	oldByKey := map[string]*model.Step{}
	dependents := map[string][]string{}
	var oldCat *kinds.Catalogue
	if old != nil {
		oldCat = old.Catalogue
		for _, s := range old.Steps {
			oldByKey[RecordKey(s.Kind, s.Name, s.Node)] = s
			for _, d := range Deps(s) {
				dependents[d] = append(dependents[d], s.ID)
			}
		}
	}
	type deletion struct {
		step *StoredStep
		orig string // the step's id in the previous package
	}
	var dels []deletion
	var errs []string
	for _, r := range removed {
		var ss *StoredStep
		if s := oldByKey[RecordKey(r.Kind, r.PkgName, r.Node)]; s != nil {
			var err error
			if ss, err = FromStep(oldCat, s); err != nil {
				errs = append(errs, err.Error())
				continue
			}
		} else {
			ss = &StoredStep{Step: model.Step{
				ID: recordStepID(r), Kind: strings.ToLower(r.Kind), Name: r.PkgName, RecordKind: r.Kind, Node: r.Node,
			}}
			ss.Base = baseKind(r.Kind, cur, oldCat)
			// A derived kind's defaults still say where its objects live
			// (an http kind's URL and path); the id comes from the record.
			for _, cat := range []*kinds.Catalogue{cur, oldCat} {
				if cat == nil {
					continue
				}
				if base, spec, err := cat.BaseSpec(r.Kind, map[string]any{}, nil); err == nil {
					ss.Base, ss.Spec = strings.ToLower(base), spec
					break
				}
			}
		}
		ss.Delete, ss.ObjectID = true, r.ID
		ss.Deps, ss.AnyOf, ss.Subscribes = nil, nil, nil
		ss.Condition, ss.Skipped = "", false
		orig := ss.ID
		if _, clash := b.byID[ss.ID]; clash {
			ss.ID += "#delete"
		}
		dels = append(dels, deletion{ss, orig})
		b.Add(ss)
		b.deletes++
	}
	for _, del := range dels {
		d := del.step
		seen := map[string]bool{}
		for _, dep := range dependents[del.orig] {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			if s, ok := b.byID[dep]; ok && s != d {
				d.Deps = append(d.Deps, s.ID)
			} else if s, ok := b.byID[dep+"#delete"]; ok {
				d.Deps = append(d.Deps, s.ID)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func recordStepID(r model.StackResource) string {
	id := strings.ToLower(r.Kind) + "/" + r.PkgName
	if r.Node != "" {
		id += "@" + r.Node
	}
	return id
}

// baseKind finds the built-in kind implementing kind in the catalogues.
func baseKind(kind string, cats ...*kinds.Catalogue) string {
	for _, c := range cats {
		if c == nil {
			continue
		}
		if k, ok := c.Lookup(kind); ok {
			if k.Base != "" {
				return strings.ToLower(k.Base)
			}
			return strings.ToLower(k.Name)
		}
	}
	return strings.ToLower(kind)
}

// Summary is one line describing the steps for the UI ("3 steps: 1
// bucket, 1 dashboard, 1 label; 1 to delete").
func (b *Builder) Summary() string {
	counts := map[string]int{}
	for _, s := range b.steps {
		if !s.Delete {
			counts[strings.ToLower(s.RecordKind)]++
		}
	}
	kindsSeen := make([]string, 0, len(counts))
	for k := range counts {
		kindsSeen = append(kindsSeen, k)
	}
	sort.Strings(kindsSeen)
	parts := make([]string, 0, len(kindsSeen))
	for _, k := range kindsSeen {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	line := fmt.Sprintf("%d steps", len(b.steps))
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	if b.deletes > 0 {
		line += fmt.Sprintf("; %d to delete", b.deletes)
	}
	return line
}
