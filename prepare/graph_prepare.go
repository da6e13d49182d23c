package prepare

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/yaql"
)

// GraphPlan is a prepared graph execution: what the caller persists (the
// task records, the units and their members, the grants of the cluster's
// agents, a dry run's plan) and what it returns to the workflow (Result,
// whose Units and Shards the caller fills when it shards).
type GraphPlan struct {
	Cluster *model.Cluster
	Result  contract.PreparedGraph
	Units   []contract.Unit
	Members [][]*planner.StoredStep
	// Records are the task records by step id (contract.DataGraphTask).
	Records map[string]*TaskRecord
	// DryRun is a dry run's plan, every step of it in order.
	DryRun *model.Plan
}

// Prepare prepares an execution of a pinned request (Pin) over the steps
// its expansion holds: it neither merges nor expands, so a retry runs the
// steps its original execution expanded. Per execution it resolves the
// Fuel expressions of each step with its node's deployment data (kept for
// later executions unless a dry run), specializes history conditions, turns
// steps a retried execution completed, or that no event of the execution
// re-runs, into noops, marks noop runs, reads copy_files sources, and plans
// the steps into units. Several types run in order: each type's steps wait
// for a barrier step that waits for every step of the type before it, so a
// failure in one type leaves the rest unrun. Problems of the graphs wrap
// ErrInvalidGraph; store failures are returned as they are. Cost: one
// expansion read, history and deployment-data reads per (node, task); the
// expanded steps are held once (each let go of when planned), with their
// repeated strings shared.
func (p *Preparer) Prepare(ctx context.Context, execID string, req contract.GraphRequest, batchSize int) (*GraphPlan, error) {
	c, err := p.st.GetCluster(ctx, req.ClusterID)
	if err != nil {
		return nil, err
	}
	types, err := p.loadExpansion(ctx, req, c)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, et := range types {
		total += len(et.Steps)
	}
	collect(total) // the expansion's text and its decoding's garbage
	hist := newNodeHistory(p.st, c.ID, req.Force)
	fuel, err := newYAQLEnv(ctx, p.st, c, execID, false, hist)
	if err != nil {
		return nil, err
	}
	usesYAQL := false
	for _, et := range types {
		usesYAQL = usesYAQL || graphUsesYAQL(et.Graph)
	}
	// A node's deployment data is kept for the next executions' change
	// functions only by executions that run; a dry-run reads it.
	fuel.save = usesYAQL && !req.DryRun
	mode := contract.ModeApply
	if req.DryRun {
		mode = contract.ModeDryRun
	}
	out := &GraphPlan{Cluster: c, Records: map[string]*TaskRecord{}}
	out.Result.Snapshots = req.Snapshots
	b := planner.NewBuilder(mode)
	multi := len(types) > 1
	// Read from the expanded steps, which the loop below lets go of.
	out.Result.Tolerance = tolerances(types, multi)
	barrier := ""
	var errs []string
	for _, et := range types {
		tasks := map[string]*model.Task{}
		digests := map[string]string{}
		for _, t := range et.Graph.Tasks {
			tasks[t.ID] = t
			digests[t.ID] = taskDigest(p.cat, t)
		}
		var typeSteps []string
		for i, s := range et.Steps {
			// An attempt Temporal gave up on (its context ended: no
			// heartbeat acknowledged, the workflow cancelled) stops here
			// rather than run on beside its retry.
			if err := ctx.Err(); err != nil {
				return nil, context.Cause(ctx)
			}
			// The planner keeps its own copy (planner.FromStep): the
			// expanded step is let go of as soon as it is planned, so
			// the steps are not held twice until the plan is written.
			et.Steps[i] = nil
			t := tasks[s.Task]
			rec := &TaskRecord{Type: et.Type, Task: s.Task, TaskType: s.Kind, Node: taskNode(s), Digest: digests[s.Task]}
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
			if len(req.RetryOf) > 0 && !req.Force && !rec.Structural {
				run, err := hist.last(ctx, rec.Node, s.Task)
				if err != nil {
					return nil, err
				}
				if run != nil && run.Digest == rec.Digest && slices.Contains(req.RetryOf, run.ExecutionID) {
					rec.DoneBy = run.ExecutionID
					s.Condition = ""
					out.Result.Done++
				}
			}
			if len(req.Events) > 0 && !req.Force && !rec.Structural && rec.DoneBy == "" && t != nil {
				ran, err := ranBefore(ctx, hist, rec, t, req.Events)
				if err != nil {
					return nil, err
				}
				if ran != "" {
					rec.RanIn = ran
					s.Condition = ""
					out.Result.Done++
				}
			}
			if req.Noop {
				s.Meta.Noop = true
			}
			if isCopyFiles(s) {
				if err := p.files.read(s); err != nil {
					errs = append(errs, err.Error())
					continue
				}
			}
			if multi {
				prefixStep(s, et.Type+"/")
				if barrier != "" {
					s.Deps = append(s.Deps, barrier)
				}
			}
			ss, err := planner.FromStep(p.cat, s)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if rec.DoneBy != "" || rec.RanIn != "" {
				ss.Base = model.TaskStage // changes nothing: an earlier execution did it
			}
			b.Add(ss)
			out.Records[ss.ID] = rec
			typeSteps = append(typeSteps, ss.ID)
		}
		if multi {
			// The barrier closes this type: the next type's steps wait for it.
			barrier = et.Type + "@" + model.ControlPlane
			b.Add(&planner.StoredStep{Step: model.Step{
				ID: barrier, Kind: model.TaskStage, Name: et.Type, RecordKind: model.TaskStage,
				Deps: typeSteps, Meta: model.Meta{Noop: req.Noop},
			}, Base: model.TaskStage})
			out.Records[barrier] = &TaskRecord{Type: et.Type, Task: et.Type, TaskType: "barrier", Node: model.ControlPlane, Structural: true}
		}
	}
	if len(errs) > 0 {
		return nil, invalidGraph("%s", strings.Join(errs, "; "))
	}
	collect(total) // the expanded steps planned, the expressions' garbage
	plan, err := b.Plan(batchSize)
	if err != nil {
		return nil, invalidGraph("%v", err)
	}
	out.Units, out.Members = plan.Units, plan.Members
	for i := range out.Units {
		out.Units[i].Summary = graphSummary(out.Units[i], out.Members[i], out.Records, req.Noop, req.DryRun)
	}
	out.Result.Steps = b.Len()
	out.Result.Summary = graphPlanSummary(c.ID, types, b.Len(), out.Result.Done, req)
	if req.DryRun {
		out.DryRun = dryRunPlan(plan.Order, out.Records)
	}
	return out, nil
}
