package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/yaql"
)

// ErrGraphRequest marks a graph execution that cannot run as asked: no
// such cluster, no graph of the type, an unknown node or task, a graph that
// does not merge or expand. Retrying does not help.
var ErrGraphRequest = errors.New("invalid graph execution")

// BuiltGraph is one type of a request, merged and expanded.
type BuiltGraph struct {
	Type  string
	Graph *model.Graph
	// Snapshot is the pinned snapshot the graph came from, if any.
	Snapshot string
	Steps    []*model.Step
}

// GraphBuild is a request's cluster and graphs.
type GraphBuild struct {
	Cluster *model.Cluster
	Graphs  []BuiltGraph
}

// BuildGraph merges and expands the graphs a request names. Problems of the
// request itself wrap ErrGraphRequest and list every error found; store
// failures are returned as they are. Cross dependencies written as yaql
// are evaluated against each node's deployment data, which is not kept.
func BuildGraph(ctx context.Context, st store.Store, cat *kinds.Catalogue, req contract.GraphRequest) (*GraphBuild, error) {
	return buildGraph(ctx, st, cat, req, func(c *model.Cluster) (*yaqlEnv, error) {
		hist := &nodeHistory{st: st, cluster: c.ID, runs: map[string]*model.TaskRun{}}
		return newYAQLEnv(ctx, st, c, "", false, hist)
	})
}

// buildGraph is BuildGraph with the expressions' environment made by
// newEnv once the cluster is read.
func buildGraph(ctx context.Context, st store.Store, cat *kinds.Catalogue, req contract.GraphRequest, newEnv func(*model.Cluster) (*yaqlEnv, error)) (*GraphBuild, error) {
	if cat == nil {
		cat = kinds.Builtin()
	}
	if req.ClusterID == "" {
		return nil, fmt.Errorf("%w: no cluster given", ErrGraphRequest)
	}
	c, err := st.GetCluster(ctx, req.ClusterID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: cluster %q not found", ErrGraphRequest, req.ClusterID)
	}
	if err != nil {
		return nil, err
	}
	types := req.Types
	if len(types) == 0 {
		types = []string{model.DefaultGraphType}
	}
	build := &GraphBuild{Cluster: c}
	fuel, err := newEnv(c)
	if err != nil {
		return nil, err
	}
	values, err := placeholderValues(ctx, st, c)
	if err != nil {
		return nil, err
	}
	var problems []string
	seen := map[string]bool{}
	found := map[string]bool{} // requested tasks some type has
	for i, typ := range types {
		if typ == "" {
			typ = model.DefaultGraphType
		}
		if seen[typ] {
			problems = append(problems, fmt.Sprintf("graph type %q is given twice", typ))
			continue
		}
		seen[typ] = true
		snap := ""
		if i < len(req.Snapshots) {
			snap = req.Snapshots[i]
		}
		g, err := loadGraph(ctx, st, cat, c, typ, snap)
		if err != nil {
			if !errors.Is(err, ErrGraphRequest) {
				return nil, err
			}
			problems = append(problems, strings.TrimPrefix(err.Error(), ErrGraphRequest.Error()+": "))
			continue
		}
		if g, err = graphs.ResolvePlaceholders(g, values); err != nil {
			problems = append(problems, fmt.Sprintf("graph %q: %s", typ, strings.ReplaceAll(err.Error(), "\n", "; ")))
			continue
		}
		// A task subset may span several types: each type gets the tasks
		// it has, and a type with none of them runs nothing.
		var only []string
		for _, t := range g.Tasks {
			if slices.Contains(req.Tasks, t.ID) {
				only = append(only, t.ID)
				found[t.ID] = true
			}
		}
		steps, err := graphs.Expand(g, c.Nodes, graphs.ExpandOptions{Nodes: req.Nodes, Tasks: only, Catalogue: cat, CrossDeps: fuel.crossDeps(ctx)})
		if fuel.failed != nil {
			return nil, fuel.failed // a store failure, not a problem of the graph
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("graph %q: %v", typ, err))
			continue
		}
		if len(req.Tasks) > 0 && len(only) == 0 {
			for _, s := range steps {
				s.Kind, s.Spec, s.Skipped = model.TaskSkipped, nil, true
			}
		}
		build.Graphs = append(build.Graphs, BuiltGraph{Type: typ, Graph: g, Snapshot: snap, Steps: steps})
	}
	if len(problems) == 0 {
		for _, t := range req.Tasks {
			if !found[t] {
				problems = append(problems, fmt.Sprintf("tasks: unknown task %q (not in graph %s)", t, strings.Join(types, ", ")))
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrGraphRequest, strings.Join(problems, "; "))
	}
	return build, nil
}

// loadGraph reads a pinned snapshot, or merges the type's layers of the
// cluster: its release, itself, then its plugins in order.
func loadGraph(ctx context.Context, st store.Store, cat *kinds.Catalogue, c *model.Cluster, typ, snapshot string) (*model.Graph, error) {
	if snapshot != "" {
		snap, err := st.GetSnapshot(ctx, snapshot)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: graph %q: snapshot %s not found", ErrGraphRequest, typ, short(snapshot))
		}
		if err != nil {
			return nil, err
		}
		if snap.Kind != "graph" {
			return nil, fmt.Errorf("%w: graph %q: snapshot %s is not a graph", ErrGraphRequest, typ, short(snapshot))
		}
		g, err := graphs.ParseGraph(graphs.Options{Catalogue: cat}, graphs.Source{Name: "graph " + typ + " (snapshot " + short(snapshot) + ")", Data: snap.Content})
		if err != nil {
			return nil, fmt.Errorf("%w: graph %q: %v", ErrGraphRequest, typ, err)
		}
		g.Type = typ
		return g, nil
	}
	type owner struct {
		layer model.Layer
		id    string
	}
	owners := []owner{}
	if c.ReleaseID != "" {
		owners = append(owners, owner{model.LayerRelease, c.ReleaseID})
	}
	owners = append(owners, owner{model.LayerCluster, c.ID})
	for _, p := range c.PluginIDs {
		owners = append(owners, owner{model.LayerPlugin, p})
	}
	var layers []graphs.LayerGraph
	for _, o := range owners {
		sg, err := st.GetGraph(ctx, o.layer, o.id, typ)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		layers = append(layers, graphs.LayerGraph{Layer: o.layer, Owner: o.id, Graph: sg.Graph})
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%w: cluster %q has no graph of type %q (none in its release, itself or its plugins)", ErrGraphRequest, c.ID, typ)
	}
	g, err := graphs.Merge(typ, layers...)
	if err != nil {
		return nil, fmt.Errorf("%w: graph %q: merge: %v", ErrGraphRequest, typ, err)
	}
	if err := graphs.ValidateGraph(cat, g).Err(); err != nil {
		return nil, fmt.Errorf("%w: graph %q: %v", ErrGraphRequest, typ, err)
	}
	return g, nil
}

// GraphActivities are the control plane's activities of graph executions.
// The steps themselves run through the ordinary step activities.
type GraphActivities struct {
	a   *Activities
	cat *kinds.Catalogue
}

// NewGraphActivities returns the graph activities over a's store; cat maps
// task types onto kinds (nil: kinds.Builtin()).
func NewGraphActivities(a *Activities, cat *kinds.Catalogue) *GraphActivities {
	if cat == nil {
		cat = kinds.Builtin()
	}
	return &GraphActivities{a: a, cat: cat}
}

// maxResultPlanSteps keeps a dry-run's answer far below Temporal's payload
// limit; larger plans are read from the store.
const maxResultPlanSteps = 5000

// graphTaskRecord is kept per step (contract.DataGraphTask).
type graphTaskRecord struct {
	Type     string `json:"type"`
	Task     string `json:"task"`
	TaskType string `json:"taskType"`
	Node     string `json:"node"` // node id, "master" for the control plane
	Digest   string `json:"digest"`
	// DoneBy is the retried execution that completed the step.
	DoneBy string `json:"doneBy,omitempty"`
	// RanIn is the execution whose run of the task on the node stands:
	// the execution names events and none of them re-runs the task.
	RanIn      string `json:"ranIn,omitempty"`
	Structural bool   `json:"structural,omitempty"`
}

// PrepareGraph merges and expands the requested graph types, specializes
// conditions with node history, turns steps a retried execution completed
// into noops, keeps the steps in the store and returns the units the
// executor runs. Several types run in order: each type's steps wait for a
// barrier step that waits for every step of the type before it, so a
// failure in one type leaves the rest unrun.
func (g *GraphActivities) PrepareGraph(ctx context.Context, in contract.PrepareGraphInput) (*contract.PreparedGraph, error) {
	st := g.a.d.Store
	hist := &nodeHistory{st: st, cluster: in.ClusterID, force: in.Force, runs: map[string]*model.TaskRun{}}
	var fuel *yaqlEnv
	build, err := buildGraph(ctx, st, g.cat, in.GraphRequest, func(c *model.Cluster) (*yaqlEnv, error) {
		var err error
		fuel, err = newYAQLEnv(ctx, st, c, in.ExecutionID, false, hist)
		return fuel, err
	})
	if errors.Is(err, ErrGraphRequest) {
		return nil, configError(err.Error())
	}
	if err != nil {
		return nil, err
	}
	out := &contract.PreparedGraph{}
	for _, bg := range build.Graphs {
		hash := bg.Snapshot
		if hash == "" {
			content, err := graphs.MarshalGraph(bg.Graph, "json")
			if err != nil {
				return nil, configError(err.Error())
			}
			if hash, err = st.PutSnapshot(ctx, "graph", content); err != nil {
				return nil, err
			}
		}
		out.Snapshots = append(out.Snapshots, hash)
	}

	usesYAQL := false
	for _, bg := range build.Graphs {
		usesYAQL = usesYAQL || graphUsesYAQL(bg.Graph)
	}
	// A node's deployment data is kept for the next executions' change
	// functions only by executions that run; a dry-run reads it.
	fuel.save = usesYAQL && !in.DryRun
	mode := contract.ModeApply
	if in.DryRun {
		mode = contract.ModeDryRun
	}
	b := planner.NewBuilder(mode)
	records := map[string]*graphTaskRecord{}
	multi := len(build.Graphs) > 1
	barrier := ""
	var errs []string
	for _, bg := range build.Graphs {
		tasks := map[string]*model.Task{}
		digests := map[string]string{}
		for _, t := range bg.Graph.Tasks {
			tasks[t.ID] = t
			digests[t.ID] = g.taskDigest(t)
		}
		prefix := ""
		if multi {
			prefix = bg.Type + "/"
		}
		var typeSteps []string
		for _, s := range bg.Steps {
			t := tasks[s.Task]
			rec := &graphTaskRecord{Type: bg.Type, Task: s.Task, TaskType: s.Kind, Node: taskNode(s), Digest: digests[s.Task]}
			if t != nil {
				rec.TaskType = t.Type
			}
			rec.Structural = s.Skipped || isStructural(s.Kind)
			if usesYAQL {
				if fuel.save && !rec.Structural {
					if _, err := fuel.deployment(ctx, rec.Node); err != nil {
						return nil, err
					}
				}
				strategyOf := t
				if s.StrategyScope != "" {
					strategyOf = tasks[s.StrategyScope] // the group's strategy, amount included
				}
				if err := fuel.resolveStep(ctx, s, strategyOf, rec.Node, rec.Structural); err != nil {
					if errors.Is(err, yaql.ErrLimit) || isYAQLError(err) {
						errs = append(errs, fmt.Sprintf("%s: %v", s.ID, err))
						continue
					}
					return nil, err
				}
			}
			if s.Condition != "" && usesHistory(s.Condition) {
				cond, err := specializeCondition(s.Condition, hist.values(ctx, rec.Node, s.Task, digests))
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", s.ID, err))
					continue
				}
				s.Condition = cond
			}
			if len(in.RetryOf) > 0 && !in.Force && !rec.Structural {
				run, err := hist.last(ctx, rec.Node, s.Task)
				if err != nil {
					return nil, err
				}
				if run != nil && run.Digest == rec.Digest && slices.Contains(in.RetryOf, run.ExecutionID) {
					rec.DoneBy = run.ExecutionID
					s.Condition = ""
					out.Done++
				}
			}
			if len(in.Events) > 0 && !in.Force && !rec.Structural && rec.DoneBy == "" && t != nil {
				ran, err := ranBefore(ctx, hist, rec, t, in.Events)
				if err != nil {
					return nil, err
				}
				if ran != "" {
					rec.RanIn = ran
					s.Condition = ""
					out.Done++
				}
			}
			if in.Noop {
				s.Meta.Noop = true
			}
			if isCopyFiles(s) {
				if err := g.a.readCopyFiles(s); err != nil {
					errs = append(errs, err.Error())
					continue
				}
			}
			if multi {
				prefixStep(s, prefix)
				if barrier != "" {
					s.Deps = append(s.Deps, barrier)
				}
			}
			ss, err := planner.FromStep(g.cat, s)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if rec.DoneBy != "" || rec.RanIn != "" {
				ss.Base = model.TaskStage // changes nothing: an earlier execution did it
			}
			b.Add(ss)
			records[ss.ID] = rec
			typeSteps = append(typeSteps, ss.ID)
		}
		if multi {
			// The barrier closes this type: the next type's steps wait for it.
			barrier = bg.Type + "@" + model.ControlPlane
			bs := &planner.StoredStep{Step: model.Step{
				ID: barrier, Kind: model.TaskStage, Name: bg.Type, RecordKind: model.TaskStage,
				Deps: typeSteps, Meta: model.Meta{Noop: in.Noop},
			}, Base: model.TaskStage}
			b.Add(bs)
			records[barrier] = &graphTaskRecord{Type: bg.Type, Task: bg.Type, TaskType: "barrier", Node: model.ControlPlane, Structural: true}
		}
	}
	if len(errs) > 0 {
		return nil, configError(strings.Join(errs, "; "))
	}
	p, err := b.Plan(in.BatchSize)
	if err != nil {
		return nil, configError(err.Error())
	}
	units, members, order := p.Units, p.Members, p.Order
	for i := range units {
		units[i].Summary = graphSummary(units[i], members[i], records, in.Noop, in.DryRun)
	}
	out.Steps = b.Len()
	out.Summary = graphPlanSummary(build, b.Len(), out.Done, in)
	out.Tolerance = tolerances(build, multi)
	raw := make(map[string][]byte, len(records))
	for id, rec := range records {
		if raw[id], err = json.Marshal(rec); err != nil {
			return nil, err
		}
	}
	if err := st.PutStepDataBatch(ctx, in.ExecutionID, contract.DataGraphTask, raw); err != nil {
		return nil, err
	}
	if err := g.a.persist(ctx, in.ExecutionID, units, members); err != nil {
		return nil, err
	}
	if err := g.a.writeGrants(ctx, in.ExecutionID, build.Cluster.ID, build.Cluster.Nodes, units, members); err != nil {
		return nil, err
	}
	if in.DryRun {
		if out.Plan, err = g.storeDryRun(ctx, in.ExecutionID, order, records); err != nil {
			return nil, err
		}
	}
	if err := g.a.shard(ctx, in.ExecutionID, units, in.ShardUnits, &out.PreparedPlan); err != nil {
		return nil, err
	}
	return out, nil
}

// storeDryRun keeps a dry-run's plan where ReadPlan finds it and returns it
// (its steps when they are few enough for a workflow result).
func (g *GraphActivities) storeDryRun(ctx context.Context, execID string, order []*planner.StoredStep, records map[string]*graphTaskRecord) (*model.Plan, error) {
	plan := &model.Plan{Steps: make([]model.PlanStep, 0, len(order)), MissingEnvRefs: []string{}, MissingSecrets: []string{}}
	entries := make(map[string][]byte, len(order))
	for _, s := range order {
		rec := records[s.ID]
		ps := model.PlanStep{ID: s.ID, Kind: rec.TaskType, Name: s.Name, Node: rec.Node, Action: model.ActionRun}
		switch {
		case rec.Structural, rec.DoneBy != "", rec.RanIn != "":
			ps.Action = model.ActionNoop
		}
		if s.Condition != "" {
			ps.Changes = []model.AttrChange{{Path: "condition", New: s.Condition}}
		}
		if rec.DoneBy != "" {
			ps.Changes = append(ps.Changes, model.AttrChange{Path: "done", New: "by " + rec.DoneBy})
		}
		if rec.RanIn != "" {
			ps.Changes = append(ps.Changes, model.AttrChange{Path: "done", New: "ran in " + rec.RanIn + "; no event of this execution re-runs it"})
		}
		plan.Summary.Add(ps.Action)
		raw, err := json.Marshal(ps)
		if err != nil {
			return nil, err
		}
		entries[s.ID] = raw
		plan.Steps = append(plan.Steps, ps)
	}
	if err := g.a.d.Store.PutStepDataBatch(ctx, execID, contract.DataPlan, entries); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(model.Plan{Summary: plan.Summary, MissingEnvRefs: []string{}, MissingSecrets: []string{}})
	if err != nil {
		return nil, err
	}
	if err := g.a.d.Store.PutStepData(ctx, execID, contract.PlanSummaryKey, contract.DataPlanSummary, raw); err != nil {
		return nil, err
	}
	if len(plan.Steps) > maxResultPlanSteps {
		plan.Steps = nil
	}
	return plan, nil
}

// RecordGraphRuns records, for each task that converged on a node in this
// execution, its run as the node's last successful run of the task, with
// the digest of its parameters. Steps that were skipped, failed, planned
// only or already done by a retried execution are left out. Recording is
// idempotent: a retried activity writes the same runs again.
func (g *GraphActivities) RecordGraphRuns(ctx context.Context, in contract.RecordGraphRunsInput) (*contract.RecordGraphRunsResult, error) {
	st := g.a.d.Store
	recs, err := st.ListStepData(ctx, in.ExecutionID, contract.DataGraphTask)
	if err != nil {
		return nil, err
	}
	outs, err := st.ListStepData(ctx, in.ExecutionID, contract.DataOutputs)
	if err != nil {
		return nil, err
	}
	at := time.Now().UTC()
	res := &contract.RecordGraphRunsResult{}
	for id, raw := range recs {
		var rec graphTaskRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("task record of %s: %w", id, err)
		}
		if rec.Structural || rec.DoneBy != "" || rec.RanIn != "" {
			continue
		}
		outRaw, ok := outs[id]
		if !ok {
			continue
		}
		var o outputsRecord
		if err := json.Unmarshal(outRaw, &o); err != nil {
			return nil, fmt.Errorf("outputs of %s: %w", id, err)
		}
		if o.Outcome == model.OutcomeFailed || o.Outcome == model.OutcomeSkipped {
			continue
		}
		err := st.RecordTaskRun(ctx, model.TaskRun{
			ClusterID: in.ClusterID, NodeID: rec.Node, TaskID: rec.Task,
			ExecutionID: in.ExecutionID, Digest: rec.Digest, At: at,
		})
		if err != nil {
			return nil, err
		}
		res.Recorded++
	}
	// Deployment data no run refers to any more is of no use.
	if _, err := st.PruneDeploymentData(ctx, in.ClusterID, in.ExecutionID); err != nil {
		return nil, err
	}
	return res, nil
}

// taskDigest identifies a task's parameters as they run: the kind its type
// maps to and its spec in that kind's form, with references unresolved (a
// secret's value never enters it).
func (g *GraphActivities) taskDigest(t *model.Task) string {
	kind, spec := t.Type, map[string]any(t.Parameters)
	if base, s, _, err := g.cat.TaskSpec(t.Type, t.Parameters); err == nil {
		kind, spec = strings.ToLower(base), s
	}
	raw, err := json.Marshal(struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}{kind, spec})
	if err != nil {
		raw = []byte(fmt.Sprintf("%s %v", kind, spec))
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// nodeHistory reads node history for one preparation, each entry once.
type nodeHistory struct {
	st      store.Store
	cluster string
	force   bool
	runs    map[string]*model.TaskRun // node + "\x00" + task; nil = never ran
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

// prefixStep puts a step of one of several graph types in its type's
// namespace: ids, dependencies, task and group.
func prefixStep(s *model.Step, prefix string) {
	s.ID = prefix + s.ID
	for i, d := range s.Deps {
		s.Deps[i] = prefix + d
	}
	for _, group := range s.AnyOf {
		for i, d := range group {
			group[i] = prefix + d
		}
	}
	if s.Task != "" {
		s.Task = prefix + s.Task
	}
	if s.Group != "" {
		s.Group = prefix + s.Group
	}
}

func nodeKey(node string) string {
	if node == "" {
		return model.ControlPlane
	}
	return node
}

func isStructural(kind string) bool {
	switch strings.ToLower(kind) {
	case model.TaskGroup, model.TaskStage, model.TaskSkipped:
		return true
	}
	return false
}

// graphSummary names a unit for the Temporal UI's timeline: "shell deploy
// on node-2", "noop shell deploy on node-2", "stage pre on master".
func graphSummary(u contract.Unit, steps []*planner.StoredStep, records map[string]*graphTaskRecord, noop, dryRun bool) string {
	if u.Batch {
		return u.Summary
	}
	rec := records[steps[0].ID]
	if rec == nil {
		return u.Summary
	}
	var b strings.Builder
	switch {
	case dryRun:
		b.WriteString("plan ")
	case noop:
		b.WriteString("noop ")
	}
	if rec.TaskType == "barrier" {
		fmt.Fprintf(&b, "end of graph %s", rec.Type)
		return b.String()
	}
	what := rec.Task
	if steps[0].Task != "" && steps[0].Task != rec.Task {
		what = steps[0].Task // type/task when several types run
	}
	where := rec.Node
	if steps[0].Node == "" && rec.Node != model.ControlPlane {
		where = model.ControlPlane + " for " + rec.Node // master_shell, a hook
	}
	fmt.Fprintf(&b, "%s %s on %s", rec.TaskType, what, where)
	switch {
	case rec.DoneBy != "":
		b.WriteString(" (done by " + rec.DoneBy + ")")
	case rec.RanIn != "":
		b.WriteString(" (ran in " + rec.RanIn + ")")
	case steps[0].Skipped:
		b.WriteString(" (skipped)")
	}
	return b.String()
}

func graphPlanSummary(build *GraphBuild, steps, done int, in contract.PrepareGraphInput) string {
	types := make([]string, len(build.Graphs))
	for i, bg := range build.Graphs {
		types[i] = bg.Type
	}
	line := fmt.Sprintf("graph %s on cluster %s: %d steps", strings.Join(types, ", "), build.Cluster.ID, steps)
	if len(in.Nodes) > 0 {
		line += ", nodes " + strings.Join(in.Nodes, ",")
	}
	if len(in.Tasks) > 0 {
		line += ", tasks " + strings.Join(in.Tasks, ",")
	}
	if done > 0 {
		line += fmt.Sprintf(", %d done before", done)
	}
	return line
}

// tolerances reads each group task's fault_tolerance against the number of
// nodes its steps run on.
func tolerances(build *GraphBuild, multi bool) map[string]int {
	out := map[string]int{}
	for _, bg := range build.Graphs {
		nodes := map[string]map[string]bool{}
		for _, s := range bg.Steps {
			if s.Group == "" {
				continue
			}
			if nodes[s.Group] == nil {
				nodes[s.Group] = map[string]bool{}
			}
			nodes[s.Group][nodeKey(s.Node)] = true
		}
		for _, t := range bg.Graph.Tasks {
			if t.Type != model.TaskGroup || t.FaultTolerance == "" {
				continue
			}
			n, err := FaultTolerance(t.FaultTolerance, len(nodes[t.ID]))
			if err != nil {
				continue // validation reports it; no tolerance then
			}
			key := t.ID
			if multi {
				key = bg.Type + "/" + t.ID
			}
			out[key] = n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// FaultTolerance reads a group's fault_tolerance as Fuel does: a count of
// nodes ("2"), a negative count meaning all of them but that many ("-1"),
// or a percentage of them, rounded down ("30%"). The result is at least 0
// and at most nodes.
func FaultTolerance(spec string, nodes int) (int, error) {
	s := strings.TrimSpace(spec)
	var n int
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.Atoi(strings.TrimSpace(pct))
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("fault_tolerance %q: want a count, a negative count or a percentage from 0%% to 100%%", spec)
		}
		n = nodes * p / 100
	} else {
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("fault_tolerance %q: want a count, a negative count or a percentage", spec)
		}
		n = v
		if v < 0 {
			n = nodes + v
		}
	}
	return min(max(n, 0), nodes), nil
}

// taskNode is the node a graph step is for, by which node history is
// kept: its own node, or, for a task run on the control plane once per
// node (master_shell, the provisioning hooks), the node its id names
// ("netboot@n1"), so each node's run is recorded as that node's.
func taskNode(s *model.Step) string {
	if s.Node == "" {
		if _, n, ok := strings.Cut(s.ID, "@"); ok && n != "" {
			return n
		}
	}
	return nodeKey(s.Node)
}
