package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// Plan shape defaults.
const (
	DefaultBatchSize  = 100
	DefaultShardUnits = 2000
	// maxBatchSpec keeps batch units small: a step whose spec is larger
	// runs alone.
	maxBatchSpec = 16 << 10
)

// batchKinds are the base kinds whose steps may share one activity: local,
// fast and independent of each other.
var batchKinds = map[string]bool{"file": true, "directory": true}

// Prepare loads the package snapshot (and, for apply and dry-run, the stack
// record and the previous snapshot, to delete what left the package with its
// old spec), builds the steps, keeps them in the store and returns the plan
// of units the executor runs.
func (a *Activities) Prepare(ctx context.Context, in contract.PrepareInput) (*contract.PreparedPlan, error) {
	if a.d.Packages == nil {
		return nil, configError("this worker cannot prepare packages (no package loader)")
	}
	stop := heartbeat(ctx)
	defer stop()

	var stack *model.Stack
	if in.StackID != "" {
		s, err := a.d.Store.GetStack(ctx, in.StackID)
		if notFound(err) {
			return nil, configError(fmt.Sprintf("stack %q not found", in.StackID))
		}
		if err != nil {
			return nil, err
		}
		stack = s
	}
	var nodes []model.Node
	if in.ClusterID != "" {
		c, err := a.d.Store.GetCluster(ctx, in.ClusterID)
		if notFound(err) {
			return nil, configError(fmt.Sprintf("cluster %q not found", in.ClusterID))
		}
		if err != nil {
			return nil, err
		}
		nodes = c.Nodes
	}

	b := &planBuilder{mode: in.Mode, byID: map[string]*StoredStep{}}
	t0 := time.Now()
	var cur *LoadedPackage
	if in.Mode != contract.ModeDestroy {
		var err error
		if cur, err = a.loadSnapshot(ctx, in.SnapshotHash, nodes); err != nil {
			return nil, err
		}
		if err := b.addCurrent(cur, stack); err != nil {
			return nil, err
		}
	}
	if stack != nil {
		removed := b.removed(stack)
		if len(removed) > 0 {
			var old *LoadedPackage
			if stack.SnapshotHash != "" && stack.SnapshotHash != in.SnapshotHash {
				var err error
				old, err = a.loadSnapshot(ctx, stack.SnapshotHash, nodes)
				if err != nil {
					// Deletes then go by the recorded object ids alone.
					a.log.Warn("previous snapshot unreadable; deleting by recorded ids", "stack", stack.ID, "snapshot", stack.SnapshotHash, "error", err)
					old = nil
				}
			}
			if err := b.addDeletes(removed, old, cur); err != nil {
				return nil, err
			}
		}
	}
	batch := in.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	shardUnits := in.ShardUnits
	if shardUnits <= 0 {
		shardUnits = DefaultShardUnits
	}
	t1 := time.Now()
	order, err := b.topoOrder()
	if err != nil {
		return nil, configError(err.Error())
	}
	b.markExported()
	units, members := b.units(order, batch)
	t2 := time.Now()
	if err := a.persist(ctx, in.ExecutionID, units, members); err != nil {
		return nil, err
	}
	a.log.Debug("prepared", "execution", in.ExecutionID, "steps", len(b.steps), "units", len(units),
		"load", t1.Sub(t0), "plan", t2.Sub(t1), "persist", time.Since(t2))
	plan := &contract.PreparedPlan{Steps: len(b.steps), Deletes: b.deletes, Summary: b.summary()}
	if len(units) <= shardUnits {
		plan.Units = units
		return plan, nil
	}
	shards := map[string][]byte{}
	for k, first := 0, 0; first < len(units); k, first = k+1, first+shardUnits {
		part := units[first:min(first+shardUnits, len(units))]
		raw, err := json.Marshal(part)
		if err != nil {
			return nil, err
		}
		shards[contract.ShardKey(k)] = raw
		sh := contract.Shard{Index: k, First: first, Units: len(part)}
		for _, u := range part {
			sh.Steps += max(u.Count, 1)
		}
		plan.Shards = append(plan.Shards, sh)
	}
	if err := a.d.Store.PutStepDataBatch(ctx, in.ExecutionID, contract.DataShard, shards); err != nil {
		return nil, err
	}
	return plan, nil
}

func (a *Activities) loadSnapshot(ctx context.Context, hash string, nodes []model.Node) (*LoadedPackage, error) {
	if hash == "" {
		return nil, configError("no package snapshot given")
	}
	key := cacheKey(hash, nodes)
	if pkg := a.parsed.get(key); pkg != nil {
		return pkg, nil
	}
	snap, err := a.d.Store.GetSnapshot(ctx, hash)
	if notFound(err) {
		return nil, configError(fmt.Sprintf("package snapshot %s not found", hash))
	}
	if err != nil {
		return nil, err
	}
	pkg, err := a.d.Packages.Load(ctx, snap.Content, nodes)
	if err != nil {
		return nil, configError(fmt.Sprintf("package snapshot %s: %v", short(hash), err))
	}
	a.parsed.put(key, pkg)
	return pkg, nil
}

// persist keeps the steps: single-step units one record per step, batch
// units one record holding their steps, and an index of all of them.
func (a *Activities) persist(ctx context.Context, execID string, units []contract.Unit, members [][]*StoredStep) error {
	var steps []*StoredStep
	for _, m := range members {
		steps = append(steps, m...)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Ord < steps[j].Ord })
	entries := make([]indexEntry, len(steps))
	for i, s := range steps {
		entries[i] = indexEntry{ID: s.ID, Kind: s.Kind, RecordKind: s.RecordKind, Name: s.Name, Node: s.Node, Associations: s.Associations, Delete: s.Delete}
	}
	index, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	singles := map[string][]byte{}
	batches := map[string][]byte{}
	for i, u := range units {
		if u.Batch {
			raw, err := json.Marshal(members[i])
			if err != nil {
				return err
			}
			batches[contract.UnitKey(u.Index)] = raw
			continue
		}
		raw, err := json.Marshal(members[i][0])
		if err != nil {
			return err
		}
		singles[members[i][0].ID] = raw
	}
	if err := a.d.Store.PutStepDataBatch(ctx, execID, contract.DataStep, singles); err != nil {
		return err
	}
	if err := a.d.Store.PutStepDataBatch(ctx, execID, contract.DataUnit, batches); err != nil {
		return err
	}
	return a.d.Store.PutStepData(ctx, execID, contract.IndexKey, contract.DataIndex, index)
}

// planBuilder turns a package (and what left it) into steps and units.
type planBuilder struct {
	mode    contract.Mode
	steps   []*StoredStep
	byID    map[string]*StoredStep
	deletes int
}

func (b *planBuilder) add(s *StoredStep) {
	s.Ord = len(b.steps)
	b.steps = append(b.steps, s)
	b.byID[s.ID] = s
}

// addCurrent adds the package's steps, mapped onto their base kinds and
// given the object ids the stack recorded.
func (b *planBuilder) addCurrent(pkg *LoadedPackage, stack *model.Stack) error {
	recorded := map[string]string{}
	if stack != nil {
		for _, r := range stack.Resources {
			recorded[recordKey(r.Kind, r.PkgName, r.Node)] = r.ID
		}
	}
	var errs []string
	for _, s := range pkg.Steps {
		ss, err := storedStep(pkg.Catalogue, s)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if id, ok := recorded[recordKey(s.Kind, s.Name, s.Node)]; ok && ss.ObjectID == "" {
			ss.ObjectID = id
		}
		b.add(ss)
	}
	if len(errs) > 0 {
		return configError(strings.Join(errs, "; "))
	}
	return nil
}

func storedStep(cat *kinds.Catalogue, s *model.Step) (*StoredStep, error) {
	ss := &StoredStep{Step: *s}
	if ss.RecordKind == "" {
		ss.RecordKind = s.Kind
	}
	if cat == nil {
		ss.Base = strings.ToLower(s.Kind)
		return ss, nil
	}
	base, spec, err := cat.BaseSpec(s.Kind, s.Spec, s.Associations)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ID, err)
	}
	ss.Base, ss.Spec = strings.ToLower(base), spec
	if k, ok := cat.Lookup(base); ok {
		ss.Verbatim = k.Verbatim
	}
	return ss, nil
}

// removed lists the recorded resources the package no longer has (all of
// them for a destroy), in record order.
func (b *planBuilder) removed(stack *model.Stack) []model.StackResource {
	present := map[string]bool{}
	for _, s := range b.steps {
		present[recordKey(s.Kind, s.Name, s.Node)] = true
	}
	var out []model.StackResource
	for _, r := range stack.Resources {
		if !present[recordKey(r.Kind, r.PkgName, r.Node)] {
			out = append(out, r)
		}
	}
	return out
}

// addDeletes adds a delete step per removed resource. A delete of X waits
// for every resource that depended on X in the previous package: for its
// new step when it stays (it drops its link to X first), for its delete
// when it goes too.
func (b *planBuilder) addDeletes(removed []model.StackResource, old, cur *LoadedPackage) error {
	oldByKey := map[string]*model.Step{}
	dependents := map[string][]string{}
	var oldCat *kinds.Catalogue
	if old != nil {
		oldCat = old.Catalogue
		for _, s := range old.Steps {
			oldByKey[recordKey(s.Kind, s.Name, s.Node)] = s
			for _, d := range s.Deps {
				dependents[d] = append(dependents[d], s.ID)
			}
			for _, group := range s.AnyOf {
				for _, d := range group {
					dependents[d] = append(dependents[d], s.ID)
				}
			}
		}
	}
	var curCat *kinds.Catalogue
	if cur != nil {
		curCat = cur.Catalogue
	}
	type deletion struct {
		step *StoredStep
		orig string // the step's id in the previous package
	}
	var dels []deletion
	var errs []string
	for _, r := range removed {
		var ss *StoredStep
		if s := oldByKey[recordKey(r.Kind, r.PkgName, r.Node)]; s != nil {
			var err error
			if ss, err = storedStep(oldCat, s); err != nil {
				errs = append(errs, err.Error())
				continue
			}
		} else {
			ss = &StoredStep{Step: model.Step{
				ID: recordStepID(r), Kind: strings.ToLower(r.Kind), Name: r.PkgName, RecordKind: r.Kind, Node: r.Node,
			}}
			ss.Base = baseKind(r.Kind, curCat, oldCat)
			// A derived kind's defaults still say where its objects live
			// (an http kind's URL and path); the id comes from the record.
			for _, cat := range []*kinds.Catalogue{curCat, oldCat} {
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
		ss.Deps, ss.AnyOf = nil, nil
		ss.Condition, ss.Skipped = "", false
		orig := ss.ID
		if _, clash := b.byID[ss.ID]; clash {
			ss.ID += "#delete"
		}
		dels = append(dels, deletion{ss, orig})
		b.add(ss)
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
		return configError(strings.Join(errs, "; "))
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

// topoOrder sorts the steps so each comes after its dependencies, keeping
// package order among independent steps.
func (b *planBuilder) topoOrder() ([]*StoredStep, error) {
	indeg := make(map[string]int, len(b.steps))
	dependents := map[string][]*StoredStep{}
	for _, s := range b.steps {
		for _, d := range stepDeps(s) {
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
		return nil, errors.New("the steps' dependencies form a cycle")
	}
	return out, nil
}

// markExported flags the steps whose outputs a dependent reads.
func (b *planBuilder) markExported() {
	for _, s := range b.steps {
		if s.Condition == "" && !hasDynamic(s.Spec) {
			continue
		}
		for _, d := range stepDeps(s) {
			if dep, ok := b.byID[d]; ok {
				dep.Exported = true
			}
		}
	}
}

// stepDeps lists every step s waits for (Deps and AnyOf members), once.
func stepDeps(s *StoredStep) []string {
	if len(s.AnyOf) == 0 {
		return s.Deps
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range s.Deps {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, g := range s.AnyOf {
		for _, d := range g {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// batchable reports whether s can share an activity with others: a small
// file or directory with nothing resolved at run time and no execution
// settings of its own.
func batchable(s *StoredStep) bool {
	if !batchKinds[s.Base] || s.Meta != (model.Meta{}) || s.Condition != "" || !s.FailsOnError() ||
		s.Strategy != 0 || s.Skipped || len(s.AnyOf) > 0 || s.Group != "" {
		return false
	}
	if hasDynamic(s.Spec) {
		return false
	}
	raw, err := json.Marshal(s.Spec)
	return err == nil && len(raw) <= maxBatchSpec
}

func hasDynamic(v any) bool {
	if expr.IsDynamic(v) {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		for _, item := range x {
			if hasDynamic(item) {
				return true
			}
		}
	case []any:
		for _, item := range x {
			if hasDynamic(item) {
				return true
			}
		}
	}
	return false
}

// units groups the ordered steps into units: batchable steps of one kind on
// one node share a unit of up to size steps, as long as none depends on
// another in the same unit; every unit depends only on earlier units.
func (b *planBuilder) units(order []*StoredStep, size int) ([]contract.Unit, [][]*StoredStep) {
	type openBatch struct {
		key   string
		steps []*StoredStep
	}
	var units []contract.Unit
	var members [][]*StoredStep
	unitOf := map[string]int{}
	open := map[string]*openBatch{}
	inOpen := map[string]*openBatch{}
	var openOrder []*openBatch

	emit := func(steps []*StoredStep) {
		idx := len(units)
		for _, s := range steps {
			unitOf[s.ID] = idx
			s.Unit = idx
		}
		units = append(units, b.unit(idx, steps, unitOf))
		members = append(members, steps)
	}
	flush := func(ob *openBatch) {
		if ob == nil || len(ob.steps) == 0 {
			return
		}
		for _, s := range ob.steps {
			delete(inOpen, s.ID)
		}
		delete(open, ob.key)
		for i, o := range openOrder {
			if o == ob {
				openOrder = append(openOrder[:i], openOrder[i+1:]...)
				break
			}
		}
		emit(ob.steps)
	}
	for _, s := range order {
		for _, d := range stepDeps(s) {
			flush(inOpen[d])
		}
		if size <= 1 || !batchable(s) {
			emit([]*StoredStep{s})
			continue
		}
		key := fmt.Sprintf("%s|%s|%v", s.Base, s.Node, s.Delete)
		ob := open[key]
		if ob == nil {
			ob = &openBatch{key: key}
			open[key] = ob
			openOrder = append(openOrder, ob)
		}
		ob.steps = append(ob.steps, s)
		inOpen[s.ID] = ob
		if len(ob.steps) >= size {
			flush(ob)
		}
	}
	for len(openOrder) > 0 {
		flush(openOrder[0])
	}
	return units, members
}

// unit describes steps (already numbered idx) for the executor.
func (b *planBuilder) unit(idx int, steps []*StoredStep, unitOf map[string]int) contract.Unit {
	first := steps[0]
	u := contract.Unit{
		Index: idx, Step: first.ID, Count: len(steps), Batch: len(steps) > 1,
		Kind: first.Kind, Node: first.Node, Delete: first.Delete,
	}
	deps := map[int]bool{}
	for _, s := range steps {
		for _, d := range s.Deps {
			deps[unitOf[d]] = true
		}
	}
	for d := range deps {
		u.Deps = append(u.Deps, d)
	}
	sort.Ints(u.Deps)
	if !u.Batch {
		u.Meta = first.Meta
		u.Strategy, u.Task, u.Group = first.Strategy, first.Task, first.Group
		u.ContinueOnError = !first.FailsOnError()
		for _, g := range first.AnyOf {
			seen := map[int]bool{}
			var group []int
			for _, d := range g {
				if ui := unitOf[d]; !seen[ui] {
					seen[ui] = true
					group = append(group, ui)
				}
			}
			sort.Ints(group)
			u.AnyOf = append(u.AnyOf, group)
		}
	}
	verb := "apply"
	switch {
	case b.mode == contract.ModeDryRun:
		verb = "plan"
	case first.Delete:
		verb = "delete"
	}
	if u.Batch {
		last := steps[len(steps)-1]
		u.Summary = fmt.Sprintf("%s %d %ss (%s … %s)", verb, len(steps), first.Base, first.ID, last.ID)
	} else {
		u.Summary = verb + " " + first.ID
		if first.Delete && b.mode == contract.ModeDryRun {
			u.Summary = "plan delete " + first.ID
		}
	}
	if first.Node != "" && !strings.Contains(first.ID, "@"+first.Node) {
		u.Summary += " on " + first.Node
	}
	return u
}

// summary is one line describing the plan for the UI.
func (b *planBuilder) summary() string {
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

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
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
